package server_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// The kernels of the exchange's random sequences: a fill that runs a while first (so that
// its write is still queued when the next operation is drawn) and y = x + 1.
var (
	xchFill = server.NewKernel(`extern "C" __global__ void xch_fill(float* out, float v, unsigned long long spin) {
    volatile float acc = 0.0f;
    for (unsigned long long i = 0; i < spin; i++) acc = acc + 1.0f;
    out[threadIdx.x] = v + (acc < 0.0f ? 1.0f : 0.0f);
}`, "xch_fill", hipsys.Dim3{X: xchLen, Y: 1, Z: 1}, []server.Access{server.Write})
	xchAdd = server.NewKernel(`extern "C" __global__ void xch_add(const float* x, float* y) {
    y[threadIdx.x] = x[threadIdx.x] + 1.0f;
}`, "xch_add", hipsys.Dim3{X: xchLen, Y: 1, Z: 1}, []server.Access{server.Read, server.Write})
)

// xchLen is the floats of each buffer of the sequences.
const xchLen = 16

// xchBuf is a buffer of the sequences and what it must hold: every float the same value.
type xchBuf struct {
	b        *server.Buffer
	ptr      hipsys.DevicePtr
	want     float32
	imported bool
}

// xchFloats reads xchLen floats of host-visible memory (the cpu platform's device memory,
// or pinned memory) as one value, or NaN when they differ.
func xchFloats(b []byte) float32 {
	v := math.Float32frombits(binary.LittleEndian.Uint32(b))
	for i := 1; i < len(b)/4; i++ {
		if math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) != v {
			return float32(math.NaN())
		}
	}
	return v
}

// The exchange with another library, over random sequences of the Device's own work on
// three streams and the other library's on a stream of its own: what the Device infers
// around it (a buffer's writes known done, a stream known idle, a release whose stream
// has drained) must never let either side see bytes other than the last write's.
//   - export: b.OrderBefore(theirs), then their copy of b on their stream sees b's last
//     write, wherever and however long ago it was queued;
//   - import direction: their write of b on their stream (after a delay of theirs), the
//     Device's stream made to wait (WaitForeign), then a read on that stream sees it;
//   - an import of their memory is released only after every write the Device queued to
//     it has run: at the release its bytes are the last write's.
//
// Across its own streams the Device orders a buffer's writes, not its reads: a write of a
// buffer that another stream may still be reading is the caller's to order (stream/
// order.go, as in CubeCL), so before such a write of the Device's the sequence waits for
// the streams that read the buffer since (orderReads), and only for those. Before their
// write, OrderBefore orders every busy stream of the Device, reads included.
//
// On the cpu platform it runs through foreignCPU; on a GPU on the platform's own calls.
func TestExchangeRandomSequences(t *testing.T) {
	d, f := openForeignDevice(t, server.Options{})
	p := f.Unwrap()
	for _, k := range []*server.Kernel{xchFill, xchAdd} {
		require.NoError(t, d.Compile(k))
	}
	theirs, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.StreamDestroy(theirs) })
	const nbytes = 4 * xchLen
	host, err := p.HostMalloc(nbytes, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.HostFree(host) })
	hostBytes := host.Bytes(nbytes)
	const delayBytes = 8 << 20 // their memset before their write: a delay of theirs
	scratch, err := p.Malloc(delayBytes)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Free(scratch) })
	streams := []server.Stream{d.On(0), d.On(1), d.On(2)}
	checks := 40
	if testing.Short() {
		checks = 10
	}

	rapid.Check(t, func(rt *rapid.T) {
		var bufs []*xchBuf
		var releases sync.WaitGroup
		var releaseMu sync.Mutex
		var badReleases []string
		for i, s := range streams {
			b, err := s.Alloc(nbytes)
			require.NoError(rt, err)
			ptr, err := b.DevicePointer()
			require.NoError(rt, err)
			bufs = append(bufs, &xchBuf{b: b, ptr: ptr, want: float32(i)})
			require.NoError(rt, s.Call(xchFill, server.Dim3{X: 1, Y: 1, Z: 1}, b.Arg(), float32(i), server.U64(0)))
		}
		// Their memory, imported on a random stream: released once the Device is done.
		importOn := rapid.IntRange(0, 2).Draw(rt, "importOn")
		mem, err := p.Malloc(nbytes)
		require.NoError(rt, err)
		imp := &xchBuf{ptr: mem, want: -1, imported: true}
		copy(hostBytes, floatBytes(xchSame(-1)...))
		require.NoError(rt, p.MemcpyHtoDAsync(mem, host, nbytes, theirs))
		require.NoError(rt, p.StreamSynchronize(theirs))
		releases.Add(1)
		imp.b, err = streams[importOn].Import(mem, nbytes, func() {
			defer releases.Done()
			// At the release the Device is done with the memory: its bytes are the last
			// write's. Looked at where device memory is host memory (the cpu platform);
			// on a GPU the release is only waited for.
			if xchHostVisible(p) {
				if got := xchFloats(hostView(mem, nbytes)); got != imp.want {
					releaseMu.Lock()
					badReleases = append(badReleases, fmt.Sprintf("released holding %v, the last write was %v", got, imp.want))
					releaseMu.Unlock()
				}
			}
		})
		require.NoError(rt, err)
		bufs = append(bufs, imp)
		released := false
		// settle waits, boundedly and with no call on the Device, for the import's
		// release: it comes once the work on the memory is done, whichever stream's.
		settle := func() bool {
			done := make(chan struct{})
			go func() { releases.Wait(); close(done) }()
			select {
			case <-done:
				return true
			case <-time.After(20 * time.Second):
				return false
			}
		}
		defer func() {
			for _, b := range bufs {
				if b.b != nil && !(b.imported && released) {
					_ = b.b.Release()
				}
			}
			if settle() {
				_ = p.Free(mem) // else the release may yet read it: left to the process
			}
		}()

		// readers holds, for each buffer, the streams whose queued work read it since the
		// buffer's last write; orderReads waits for those of them other than the writer's.
		readers := map[*xchBuf]map[int]bool{}
		orderReads := func(b *xchBuf, s int) {
			for r := range readers[b] {
				if r != s {
					require.NoError(rt, streams[r].Sync())
				}
			}
			delete(readers, b)
		}
		value := float32(100)
		for step := range rapid.IntRange(1, checks).Draw(rt, "steps") {
			s := rapid.IntRange(0, 2).Draw(rt, "s")
			live := bufs
			if released {
				live = bufs[:3]
			}
			b := rapid.SampledFrom(live).Draw(rt, "b")
			switch op := rapid.IntRange(0, 6).Draw(rt, "op"); op {
			case 0, 1: // the Device writes b, after a while
				orderReads(b, s)
				value++
				spin := rapid.SampledFrom([]uint64{0, 20_000, 400_000}).Draw(rt, "spin")
				require.NoError(rt, streams[s].Call(xchFill, server.Dim3{X: 1, Y: 1, Z: 1}, b.b.Arg(), value, server.U64(spin)))
				b.want = value
			case 2: // y = x + 1 on the Device
				y := rapid.SampledFrom(live).Draw(rt, "y")
				if y == b {
					continue
				}
				orderReads(y, s)
				require.NoError(rt, streams[s].Call(xchAdd, server.Dim3{X: 1, Y: 1, Z: 1}, b.b.Arg(), y.b.Arg()))
				y.want = b.want + 1
				if readers[b] == nil {
					readers[b] = map[int]bool{}
				}
				readers[b][s] = true
			case 3: // export: their copy of b, ordered after b's writes on the device
				require.NoError(rt, b.b.OrderBefore(uint64(theirs)))
				clear(hostBytes)
				require.NoError(rt, p.MemcpyDtoHAsync(host, b.ptr, nbytes, theirs))
				require.NoError(rt, p.StreamSynchronize(theirs))
				if got := xchFloats(hostBytes); got != b.want {
					rt.Fatalf("step %d: their copy after OrderBefore read %v, the last write was %v", step, got, b.want)
				}
			case 4: // import direction: their write of b, the Device's stream made to wait
				// The Device's own writes of b first: theirs comes after them. (Ordering
				// the Device's writes before their write is the exchange's other half.)
				require.NoError(rt, b.b.OrderBefore(uint64(theirs)))
				delete(readers, b) // OrderBefore orders the Device's reads of b before theirs too
				value++
				if rapid.Bool().Draw(rt, "delay") {
					require.NoError(rt, p.MemsetAsync(scratch, 0, delayBytes, theirs))
				}
				copy(hostBytes, floatBytes(xchSame(value)...))
				require.NoError(rt, p.MemcpyHtoDAsync(b.ptr, host, nbytes, theirs))
				require.NoError(rt, streams[s].WaitForeign(uint64(theirs)))
				got, err := streams[s].Read(b.b)
				require.NoError(rt, err)
				if v := xchFloats(got); v != value {
					rt.Fatalf("step %d: a read on stream %d after WaitForeign got %v, their write was %v", step, s, v, value)
				}
				// Their host buffer is theirs again only once their copy has run.
				require.NoError(rt, p.StreamSynchronize(theirs))
				b.want = value
			case 5: // the Device reads b on a stream
				got, err := streams[s].Read(b.b)
				require.NoError(rt, err)
				if v := xchFloats(got); v != b.want {
					rt.Fatalf("step %d: a read on stream %d got %v, the last write was %v", step, s, v, b.want)
				}
			case 6: // let go of the import (the release checks its bytes)
				if released {
					continue
				}
				require.NoError(rt, imp.b.Release())
				released = true
			}
		}
		if !released {
			require.NoError(rt, imp.b.Release())
			released = true
		}
		if !settle() {
			rt.Fatalf("the import was not released 20 s after its Release")
		}
		if len(badReleases) > 0 {
			rt.Fatalf("%s", badReleases[0])
		}
	})
}

// xchSame is xchLen copies of v.
func xchSame(v float32) []float32 {
	out := make([]float32, xchLen)
	for i := range out {
		out[i] = v
	}
	return out
}

// xchHostVisible is whether the platform's device memory can be read by host code.
func xchHostVisible(p hipsys.Platform) bool { return p.Name() == "cpu" }
