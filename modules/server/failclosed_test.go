package server_test

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// Logical ids 0 and 1 share one device stream (MaxStreams 1). A launch under id 1 faults
// on the device, and the wait that reports it is a Sync of id 0: the fault belongs to the
// work on the device stream, whichever id's wait reports it, so the faulted launch's
// output carries the failure and never reads its old bytes.
func TestFaultReportedThroughAnotherIDLandsOnItsOutput(t *testing.T) {
	d, w := openFaulting(t, server.Options{MaxStreams: 1})
	one := d.On(1)
	x, y := upload(t, one, 1, 2, 3, 4), upload(t, one, -1, -1, -1, -1)
	require.NoError(t, d.Compile(devScale))
	require.NoError(t, d.Sync())
	require.NoError(t, one.Sync())

	w.armed.Store(1)
	require.NoError(t, one.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}}))
	require.ErrorIs(t, d.Sync(), hipsys.ErrorLaunchFailure, "id 0's wait is the one past the fault")
	_, err := one.Read(y)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "the faulted launch's output carries the failure")
	_, err = d.Read(y)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "from any id")
	assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, one, x), "its input is untouched")
}

// Another library writes a Device buffer on a stream of its own, records an event, and
// makes the Device's native stream wait for it (DLPack's and the CUDA array interface's
// way). A small read right after must see that write, even though the Device saw its
// stream idle before: once the native handle is out, the stream is shared, and only the
// driver knows what is queued on it.
func TestSmallReadAfterOutsideOrderingSeesTheOutsideWrite(t *testing.T) {
	for _, c := range []struct {
		name   string
		staged bool // small reads through pinned slots, as on nvidia
	}{{"direct", false}, {"staged", true}} {
		t.Run(c.name, func(t *testing.T) {
			d, w := openFaultingAs(t, server.Options{}, c.staged)
			p := w.Platform
			y := upload(t, d.Stream, 1, 2, 3, 4)
			require.NoError(t, d.Sync(), "the Device now believes its stream idle")
			native, err := d.Stream.NativeHandle()
			require.NoError(t, err)
			ptr, err := y.DevicePointer()
			require.NoError(t, err)

			// The other library: a long memset first, so its write lands well after the
			// read is issued, then the write, an event, and the Device's stream made to
			// wait for it.
			theirs, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
			require.NoError(t, err)
			defer p.StreamDestroy(theirs)
			const long = 256 << 20
			scratch, err := p.Malloc(long)
			require.NoError(t, err)
			defer p.Free(scratch)
			ev, err := p.EventCreateWithFlags(0)
			require.NoError(t, err)
			defer p.EventDestroy(ev)
			require.NoError(t, p.MemsetAsync(scratch, 0, long, theirs))
			require.NoError(t, p.MemsetAsync(ptr, 0x3f, 16, theirs))
			require.NoError(t, p.EventRecord(ev, theirs))
			require.NoError(t, p.StreamWaitEvent(hipsys.Stream(native), ev, 0))

			got, err := d.Read(y)
			require.NoError(t, err)
			want := make([]byte, 16)
			for i := range want {
				want[i] = 0x3f
			}
			assert.Equal(t, want, got, "the read is ordered after the outside write")
		})
	}
}

// A graph captured on stream 0 reads x; x is then rewritten on a busy stream 1; a replay
// on stream 0 right after must compute from the new x, as a launch in its place would:
// a replay is ordered after the last write of every buffer it uses.
func TestReplayWaitsForItsInputsLastWriteOnAnotherStream(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	x, y := upload(t, d.Stream, 1, 1, 1, 1), alloc(t, d.Stream, 16)
	require.NoError(t, d.Compile(devScale))
	g, err := d.Capture(func(s server.Stream) error {
		return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	})
	require.NoError(t, err)
	defer g.Destroy()
	require.NoError(t, d.Sync())

	busy, n, out := busyStream(t, d)
	src := upload(t, busy, 5.5, 5.5, 5.5, 5.5)
	require.NoError(t, busy.Sync())
	require.NoError(t, busy.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, out.Arg(), server.U64(n)))
	// x (homed on stream 0) rewritten on the busy stream, after the spin: 11 each.
	require.NoError(t, busy.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{src, x}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}}))
	require.NoError(t, g.Replay())
	assert.Equal(t, []float32{22, 22, 22, 22}, readFloats(t, d.Stream, y), "computed from x's last write")
}

// A buffer read by a graph that carries a failure refuses the replay, and the graph's
// outputs take that failure: the recorded work would compute them from bytes nothing
// wrote.
func TestReplayFromAFailedInputIsRefused(t *testing.T) {
	d, f := openDevice(t, server.Options{DirectLaunch: true}) // the refusal at the call
	x, y := upload(t, d.Stream, 1, 2, 3, 4), alloc(t, d.Stream, 16)
	src := upload(t, d.Stream, 9, 9, 9, 9)
	require.NoError(t, d.Compile(devScale))
	g, err := d.Capture(func(s server.Stream) error {
		return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	})
	require.NoError(t, err)
	defer g.Destroy()
	require.NoError(t, g.Replay())
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, y))

	require.True(t, f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure))
	_ = d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{src, x}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	f.Reset()
	require.ErrorIs(t, d.Check(x), hipsys.ErrorLaunchFailure, "x carries the refused launch's failure")
	assert.ErrorIs(t, g.Replay(), hipsys.ErrorLaunchFailure, "the replay reads x")
	_, err = d.Read(y)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "its output takes x's failure, never bytes computed from it")
}

// Close while another goroutine's capture is recording (between its calls): Close
// succeeds, ending the capture without a graph, and the capturing goroutine's next call
// is refused as closed.
func TestCloseWhileACaptureRecords(t *testing.T) {
	for _, phase := range []int{1, 2} { // 1: during the warm-up (prepared), 2: recording
		p, err := hipsys.Open("auto")
		require.NoError(t, err)
		d, err := server.OpenPlatform(p, server.Options{})
		require.NoError(t, err)
		x, y := upload(t, d.Stream, 1, 2, 3, 4), alloc(t, d.Stream, 16)
		require.NoError(t, d.Compile(devScale))
		inside, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			calls := 0
			_, err := d.Capture(func(s server.Stream) error {
				calls++
				if calls == phase {
					close(inside)
					<-release
				}
				return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
			})
			done <- err
		}()
		<-inside
		assert.NoError(t, d.Close(), "phase %d: Close ends the open capture", phase)
		close(release)
		assert.ErrorIs(t, <-done, server.ErrClosed, "phase %d: the capture's later calls are refused", phase)
	}
}

// A staging wait that fails (here an injected hipEventSynchronize failure, while a large
// write on stream 1 takes a chunk whose last copy was stream 0's) fails that write, and
// blames nothing else: a buffer written earlier on stream 0 by a Write that returned nil
// reads its bytes, since the driver's own wait of stream 0 says its work is done.
func TestFailedStagingWaitBlamesNoBystander(t *testing.T) {
	d, f := openDevice(t, server.Options{StagingChunk: 16 << 10, StagingDepth: 2})
	one := d.On(1)
	a := alloc(t, d.Stream, 64<<10)
	b := alloc(t, one, 64<<10)
	want := make([]byte, 64<<10)
	for i := range want {
		want[i] = byte(i * 7)
	}
	require.NoError(t, d.Sync())
	require.NoError(t, d.Write(a, want), "stream 0's write returns nil; its last chunks stay armed")
	require.True(t, f.FailNth("hipEventSynchronize", 1, hipsys.ErrorLaunchFailure))
	err := one.Write(b, make([]byte, 64<<10))
	f.Reset()
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "the write whose wait failed fails")
	got, err := d.Read(a)
	require.NoError(t, err, "stream 0's write is no bystander of stream 1's failed wait")
	assert.Equal(t, want, got)
	_, err = one.Read(b)
	assert.Error(t, err, "the failed write's buffer carries its failure")
}

// After a device fault, a later call that the device refuses with the fault's status
// names the work that faulted (its stream and the last kernel launched there) before its
// own step, so a user reading "unable to reserve pinned memory" or a refused launch
// learns why; a successful Sync ends that (the cpu device recovers from a fault).
func TestLaterFailuresNameTheFaultedWork(t *testing.T) {
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	dev, ok := p.(deviceFaulter)
	if !ok {
		t.Skipf("platform %T cannot fault work on the device and recover", p)
	}
	f := faults.Wrap(&faultingLaunches{Platform: p, dev: dev})
	w := f.Unwrap().(*faultingLaunches)
	d, err := server.OpenPlatform(f, server.Options{DirectLaunch: true})
	require.NoError(t, err)
	defer d.Close()
	x, y, z := upload(t, d.Stream, 1, 2, 3, 4), alloc(t, d.Stream, 16), alloc(t, d.Stream, 16)
	require.NoError(t, d.Compile(devScale))
	require.NoError(t, d.Sync())

	w.armed.Store(1)
	require.NoError(t, d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}}))
	require.ErrorIs(t, d.Sync(), hipsys.ErrorLaunchFailure)

	// The device now refuses a launch with the fault's status, as a faulted GPU does.
	f.Fail("hipModuleLaunchKernel", hipsys.ErrorLaunchFailure)
	_ = d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, z}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	f.Reset()
	err = d.Check(z)
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	assert.Regexp(t, `^compute: work queued on stream 0 failed on the device \(the last kernel launched there: dev_scale\)`, err.Error(),
		"the refused launch's failure names the faulted work first")

	require.ErrorIs(t, d.Sync(), hipsys.ErrorLaunchFailure, "the refused launch is reported by the stream's Sync")
	require.NoError(t, d.Sync())
	f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
	_ = d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, z}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	err = d.Check(z)
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	assert.NotContains(t, err.Error(), "failed on the device", "after a successful Sync a failure is its own")
}

// Close with goroutines still working, over random mixes: each goroutine launches,
// writes, reads, syncs and captures on random stream ids (fewer device streams than
// ids), and Close lands at a random moment. Close always succeeds, every call after it
// returns ErrClosed, and every call before it either succeeds or fails for a reason of
// its own (a capture refused by another goroutine's, a buffer a recording claims); none
// crashes or hangs.
func TestCloseWithGoroutinesWorking(t *testing.T) {
	rounds := 48
	if testing.Short() || raceEnabled {
		rounds = 8
	}
	withChecks(rounds, func() {
		rapid.Check(t, func(rt *rapid.T) {
			p, err := hipsys.Open("auto")
			require.NoError(rt, err)
			d, err := server.OpenPlatform(p, server.Options{MaxStreams: rapid.IntRange(1, 2).Draw(rt, "maxStreams"), StagingChunk: 16 << 10,
				Logger: slog.New(slog.DiscardHandler)})
			require.NoError(rt, err)
			require.NoError(rt, d.Compile(devScale))
			workers := rapid.IntRange(2, 5).Draw(rt, "workers")
			seeds := make([]int64, workers)
			for i := range seeds {
				seeds[i] = rapid.Int64().Draw(rt, "seed")
			}
			delay := time.Duration(rapid.IntRange(0, 20).Draw(rt, "delayMs")) * time.Millisecond
			allowed := func(err error) bool {
				return err == nil || errors.Is(err, server.ErrClosed) || errors.Is(err, server.ErrCaptureState) ||
					errors.Is(err, server.ErrRecorded) || errors.Is(err, compute.ErrCaptureClosed)
			}
			var wg sync.WaitGroup
			// Room for every call's error: a worker blocked on a full channel would hang wg.Wait.
			errs := make(chan error, workers*400*2)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(seeds[w]), 1))
					for i := 0; i < 400; i++ {
						s := d.On(server.StreamID(r.IntN(4)))
						x, err := s.Alloc(16)
						if err != nil {
							errs <- err
							if errors.Is(err, server.ErrClosed) {
								return
							}
							continue
						}
						y, err := s.Alloc(16)
						if err != nil {
							// Close may land between the two allocations: y is then nil, and
							// launching with it would be this test's mistake, not the Device's.
							errs <- err
							_ = x.Release()
							continue
						}
						var opErr error
						switch r.IntN(5) {
						case 0:
							opErr = s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
						case 1:
							opErr = s.Write(x, make([]byte, 16))
						case 2:
							_, opErr = s.Read(x)
						case 3:
							opErr = s.Sync()
						case 4:
							var g *server.Graph
							g, opErr = s.Capture(func(cs server.Stream) error {
								return cs.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
							})
							if g != nil {
								_ = g.Destroy()
							}
						}
						if opErr != nil {
							errs <- opErr
						}
						_ = x.Release()
						_ = y.Release()
					}
				}()
			}
			time.Sleep(delay)
			cerr := d.Close()
			wg.Wait()
			close(errs)
			require.NoError(rt, cerr, "Close succeeds whatever the other goroutines do")
			for err := range errs {
				assert.True(rt, allowed(err), "a call failed for no reason of its own: %v", err)
			}
		})
	})
}
