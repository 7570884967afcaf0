package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

func TestDeviceBadInput(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	other, _ := openDevice(t, server.Options{})
	released := alloc(t, d.Stream, 64)
	require.NoError(t, released.Release())
	foreign := alloc(t, other.Stream, 64)
	small := alloc(t, d.Stream, 16)

	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"write to released", func() error { return d.Write(released, []byte{1}) }, server.ErrReleased},
		{"read of released", func() error { _, err := d.Read(released); return err }, server.ErrReleased},
		{"release twice", released.Release, server.ErrReleased},
		{"launch with released", func() error {
			return d.Launch(devInc, grid(1), server.Args{Buffers: []*server.Buffer{released}, Scalars: []server.Scalar{server.U32(1)}})
		}, server.ErrReleased},
		{"write to foreign", func() error { return d.Write(foreign, []byte{1}) }, server.ErrForeign},
		{"sync foreign", func() error { return d.Sync(foreign) }, server.ErrForeign},
		{"write nil", func() error { return d.Write(nil, []byte{1}) }, server.ErrInvalidArgument},
		{"read nil", func() error { _, err := d.Read(nil); return err }, server.ErrInvalidArgument},
		{"write past the end", func() error { return d.Write(small, make([]byte, 17)) }, server.ErrOutOfBounds},
		{"read past the end", func() error { return d.ReadInto(make([]byte, 17), small) }, server.ErrOutOfBounds},
		{"launch nil kernel", func() error { return d.Launch(nil, grid(1), server.Args{}) }, server.ErrInvalidArgument},
		{"launch wrong buffer count", func() error {
			return d.Launch(devAdd, grid(1), server.Args{Buffers: []*server.Buffer{small}})
		}, server.ErrInvalidArgument},
		{"compile nil", func() error { return d.Compile(nil) }, server.ErrInvalidArgument},
		{"capture nil", func() error { _, err := d.Capture(nil); return err }, server.ErrInvalidArgument},
		{"profile nil", func() error { _, err := d.Profile(nil); return err }, server.ErrInvalidArgument},
		{"replay nil", func() error { var g *server.Graph; return g.Replay() }, server.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			assert.ErrorIs(t, err, c.want)
		})
	}
}

func TestDeviceClosed(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	b := alloc(t, d.Stream, 64)
	k := upload(t, d.Stream, 1, 2)
	g, err := d.Capture(func(s server.Stream) error {
		return s.Launch(devInc, grid(2), server.Args{Buffers: []*server.Buffer{k}, Scalars: []server.Scalar{server.U32(2)}})
	})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "a second Close is nil")

	calls := map[string]func() error{
		"alloc":   func() error { _, err := d.Alloc(1); return err },
		"write":   func() error { return d.Write(b, []byte{1}) },
		"read":    func() error { _, err := d.Read(b); return err },
		"launch":  func() error { return d.Launch(devEmpty, grid(1), server.Args{}) },
		"sync":    func() error { return d.Sync() },
		"replay":  g.Replay,
		"destroy": g.Destroy,
		"compile": func() error { return d.Compile(devEmpty) },
		"usage":   func() error { _, err := d.MemoryUsage(); return err },
		"profile": func() error { _, err := d.StartProfile(); return err },
	}
	for name, call := range calls {
		assert.ErrorIs(t, call(), server.ErrClosed, name)
	}
	assert.NoError(t, b.Release(), "a release after Close is a no-op")
}

func TestDeviceCompileError(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	broken := server.NewKernel(`extern "C" __global__ void dev_broken(float* out) { not C++ }`, "dev_broken", devBlock, []server.Access{server.Write})
	err := d.Compile(broken)
	require.ErrorIs(t, err, server.ErrCompilation)
	var ce *server.CompileError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "dev_broken", ce.Entry)

	// Launched anyway: the call returns the compile error, the output carries it, and
	// the stream's next Sync reports it, once.
	out := alloc(t, d.Stream, 64)
	require.ErrorIs(t, d.Launch(broken, grid(1), server.Args{Buffers: []*server.Buffer{out}}), server.ErrCompilation)
	_, err = d.Read(out)
	assert.ErrorIs(t, err, server.ErrCompilation)
	assert.ErrorIs(t, d.Check(out), server.ErrCompilation)
	assert.ErrorIs(t, d.Sync(), server.ErrCompilation)
	assert.NoError(t, d.Sync())
	assert.ErrorIs(t, d.Sync(out), server.ErrCompilation, "the output still carries it")
}

// TestDeviceInjectedFailure is the failure model through the Device: a launch the
// driver refuses leaves exactly its outputs carrying the failure; everything else reads
// fine; writing the output heals it.
func TestDeviceInjectedFailure(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	in := upload(t, d.Stream, 1, 2, 3, 4)
	a, b, c := alloc(t, d.Stream, 16), alloc(t, d.Stream, 16), alloc(t, d.Stream, 16)
	require.NoError(t, d.Compile(devScale))
	require.True(t, f.FailNth("hipModuleLaunchKernel", 2, hipsys.ErrorLaunchFailure))
	for _, out := range []*server.Buffer{a, b, c} {
		require.NoError(t, d.Launch(devScale, grid(4), server.Args{
			Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)},
		}))
	}
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, a))
	_, err := d.Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, c))
	assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, d.Stream, in), "inputs never carry a launch's failure")
	_, err = d.On(5).Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "from any stream")

	// A consumer of b inherits the failure instead of reading stale bytes.
	sum := alloc(t, d.Stream, 16)
	require.NoError(t, d.Launch(devAdd, grid(4), server.Args{Buffers: []*server.Buffer{a, b, sum}, Scalars: []server.Scalar{server.U32(4)}}))
	assert.ErrorIs(t, d.Check(sum), hipsys.ErrorLaunchFailure)

	require.NoError(t, d.Write(b, floatBytes(9, 9, 9, 9)))
	assert.Equal(t, []float32{9, 9, 9, 9}, readFloats(t, d.Stream, b), "a write heals the buffer")
}

func TestDeviceCopyFailures(t *testing.T) {
	d, f := openDevice(t, server.Options{StagingChunk: 4 << 10})
	b := upload(t, d.Stream, make([]float32, 4096)...) // 16 KiB: four chunks

	require.True(t, f.FailNth("hipMemcpyHtoDAsync", 3, hipsys.ErrorInvalidValue))
	err := d.Write(b, make([]byte, 16<<10))
	require.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	assert.ErrorIs(t, d.Check(b), hipsys.ErrorInvalidValue, "the half-written buffer carries it")
	_, err = d.Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)

	require.NoError(t, d.Write(b, make([]byte, 16<<10)))
	require.NoError(t, d.Check(b))

	// A read larger than the direct-copy limit always takes the staging pipeline.
	big := upload(t, d.Stream, make([]float32, 32<<10)...) // 128 KiB: 32 chunks
	require.True(t, f.FailNth("hipMemcpyDtoHAsync", 2, hipsys.ErrorInvalidValue))
	_, err = d.Read(big)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	_, err = d.Read(big)
	assert.NoError(t, err, "a read failure is the read's alone")

	// A small read of an idle stream is one blocking copy.
	require.ErrorIs(t, d.Sync(), hipsys.ErrorInvalidValue, "the failed write was the stream's work: its Sync reports it")
	require.NoError(t, d.Sync())
	before := f.Calls("hipMemcpyDtoH")
	require.True(t, f.FailNth("hipMemcpyDtoH", 1, hipsys.ErrorInvalidValue))
	_, err = d.Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	assert.Equal(t, before+1, f.Calls("hipMemcpyDtoH"))
	_, err = d.Read(b)
	assert.NoError(t, err)
}

// The zero value of every handle the package hands out is an error to use, never a
// panic: a buffer, a graph, a profile, a stream and a device nobody opened.
func TestZeroValuesAreErrors(t *testing.T) {
	var b server.Buffer
	assert.ErrorIs(t, b.Release(), server.ErrInvalidArgument)
	assert.NotEmpty(t, b.String())
	var g server.Graph
	assert.ErrorIs(t, g.Replay(), server.ErrInvalidArgument)
	assert.ErrorIs(t, g.Destroy(), server.ErrInvalidArgument)
	var p server.Profile
	_, err := p.Stop()
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
	p.Abandon()
	var s server.Stream
	assert.ErrorIs(t, s.Sync(), server.ErrInvalidArgument)
	_, err = s.Alloc(8)
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
	assert.ErrorIs(t, s.Launch(devEmpty, grid(1), server.Args{}), server.ErrInvalidArgument)
	var d *server.Device
	assert.NoError(t, d.Close())
	assert.ErrorIs(t, d.Compile(devEmpty), server.ErrInvalidArgument)
}

// A graph holds every buffer its work uses until it is destroyed, whatever the caller
// releases: a replay after the release writes the memory it always wrote, never a new
// allocation that took the released memory over.
func TestGraphHoldsItsBuffersUntilDestroyed(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := alloc(t, d.Stream, 16)
	g, err := d.Capture(func(s server.Stream) error {
		return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(100), server.U32(4)}})
	})
	require.NoError(t, err)
	require.NoError(t, x.Release())
	require.NoError(t, y.Release())
	require.NoError(t, d.Cleanup())
	// New buffers of the same size: with the graph's buffers back in the pool, these
	// would be handed their memory.
	var fresh []*server.Buffer
	for i := range 8 {
		fresh = append(fresh, upload(t, d.Stream, float32(i), float32(i), float32(i), float32(i)))
	}
	require.NoError(t, g.Replay())
	require.NoError(t, d.Sync())
	for i, b := range fresh {
		assert.Equal(t, []float32{float32(i), float32(i), float32(i), float32(i)}, readFloats(t, d.Stream, b), "buffer %d, allocated after the release", i)
	}
	require.NoError(t, g.Destroy())
}

// A write that fails at any point (a chunk's copy, the event that marks a chunk done, the
// wait for that event) leaves its destination carrying the failure as well as returning
// it: a read never returns bytes that are partly the new data and partly the old. A
// write that returns nil wrote everything.
func TestWriteFailingAnywhereLeavesItsDestinationFailed(t *testing.T) {
	const size = 8 << 10 // eight chunks of the ring below
	old, data := bytes.Repeat([]byte{1}, size), bytes.Repeat([]byte{2}, size)
	for _, call := range []string{"hipMemcpyHtoDAsync", "hipEventRecord", "hipEventSynchronize"} {
		for n := 1; n <= 10; n++ {
			t.Run(fmt.Sprintf("%s %d", call, n), func(t *testing.T) {
				d, f := openDevice(t, server.Options{StagingChunk: 1 << 10, StagingDepth: 2})
				dst := alloc(t, d.Stream, size)
				require.NoError(t, d.Write(dst, old))
				require.NoError(t, d.Sync())
				f.FailNth(call, n, hipsys.ErrorLaunchFailure)
				werr := d.Write(dst, data)
				f.Reset()
				got, rerr := d.Read(dst)
				if werr != nil {
					assert.ErrorIs(t, d.Check(dst), hipsys.ErrorLaunchFailure, "the destination carries the write's failure")
					assert.ErrorIs(t, rerr, hipsys.ErrorLaunchFailure)
					return
				}
				require.NoError(t, rerr)
				assert.True(t, bytes.Equal(data, got), "a write that returned nil wrote every byte")
			})
		}
	}
}

// The wait for a staging chunk is the wait for the copy it last carried, but its
// failure alone names no work: the call that waits is told, and the chunk's stream is
// asked with the driver's own stream-wide wait. Here the device is fine (the injected
// failure is the event wait's own), so that wait succeeds: the write whose bytes never
// left the host fails, and the earlier write whose copy the chunk carried is confirmed,
// confirmed by a Sync or not, on the same stream or another. (A fault on the device
// fails the stream's wait too, and then its unconfirmed writes carry it:
// TestAsyncLaunchFaultLandsOnTheUnconfirmedOutputs, "a write reports it".)
func TestStagingWaitFailureIsCheckedByTheStreamsOwnWait(t *testing.T) {
	for _, c := range []struct {
		name    string
		confirm bool // a Sync between the writes
		other   bool // the second write on another stream
	}{{"unconfirmed", false, false}, {"confirmed", true, false}, {"another stream", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			d, f := openDevice(t, server.Options{StagingChunk: 1 << 10, StagingDepth: 2})
			on := d.Stream
			if c.other {
				on = d.On(1)
			}
			a := alloc(t, d.Stream, 2<<10)
			b := alloc(t, on, 1<<10)
			aBytes := bytes.Repeat([]byte{1}, 2<<10)
			require.NoError(t, d.Write(a, aBytes)) // both chunks, queued
			if c.confirm {
				require.NoError(t, d.Sync())
			}
			f.FailNth("hipEventSynchronize", 1, hipsys.ErrorLaunchFailure)
			assert.ErrorIs(t, on.Write(b, bytes.Repeat([]byte{2}, 1<<10)), hipsys.ErrorLaunchFailure, "the call that waits is told")
			f.Reset()
			assert.ErrorIs(t, d.Check(b), hipsys.ErrorLaunchFailure, "b's bytes never reached the device")
			require.NoError(t, d.Check(a), "the stream's own wait confirmed a's write")
			got, err := d.Read(a)
			require.NoError(t, err)
			assert.Equal(t, aBytes, got)
			// Rewriting recovers b.
			require.NoError(t, on.Write(b, bytes.Repeat([]byte{4}, 1<<10)))
			got, err = on.Read(b)
			require.NoError(t, err)
			assert.Equal(t, bytes.Repeat([]byte{4}, 1<<10), got)
		})
	}
}

// An in-place kernel refused, then launched again on the same buffer: the buffer's bytes
// are the second launch's input, and nothing wrote them, so the failure stays on it.
// The launch queue and a launch on the caller's thread leave the same result.
func TestReadWriteInputCarriesItsFailureOn(t *testing.T) {
	for _, direct := range []bool{true, false} {
		t.Run(map[bool]string{true: "direct", false: "queued"}[direct], func(t *testing.T) {
			d, f := openDevice(t, server.Options{DirectLaunch: direct})
			x := upload(t, d.Stream, 1, 2, 3, 4)
			inc := func() {
				require.NoError(t, d.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(4)}}))
			}
			inc() // compiled and warm: the fault hits a launch
			require.NoError(t, d.Sync())
			f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
			inc() // refused
			inc() // would run on bytes the refused launch never wrote
			_, err := d.Read(x)
			assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
			// A write from the host recovers it.
			require.NoError(t, d.Write(x, floatBytes(1, 2, 3, 4)))
			inc()
			assert.Equal(t, []float32{2, 3, 4, 5}, readFloats(t, d.Stream, x))
		})
	}
}

// A capture in which any recorded work failed (a launch the platform refused, a launch
// whose input carried a failure) is refused: EndCapture returns the failure and no
// graph, and the outputs of the failed work keep it. A graph missing that work would,
// at every replay, leave its outputs looking written.
func TestCaptureWithFailedWorkIsRefused(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	s := d.On(1)
	x := upload(t, s, 1, 2, 3, 4)
	y := alloc(t, s, 16)
	z := alloc(t, s, 16)
	scale := func(in, out *server.Buffer) error {
		return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	}
	run := func(s server.Stream) error {
		if err := scale(x, y); err != nil {
			return err
		}
		return scale(y, z)
	}

	require.NoError(t, s.PrepareCapture())
	require.NoError(t, run(s))
	require.NoError(t, s.BeginCapture())
	f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
	require.NoError(t, run(s)) // the failure is carried, not returned
	g, err := s.EndCapture()
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	assert.Nil(t, g)
	assert.ErrorIs(t, s.Check(y), hipsys.ErrorLaunchFailure, "the refused launch's output")
	assert.ErrorIs(t, s.Check(z), hipsys.ErrorLaunchFailure, "computed from it")

	// The stream captures again, and a clean capture is kept.
	require.NoError(t, s.Write(y, floatBytes(0, 0, 0, 0)))
	g, err = s.Capture(run)
	require.NoError(t, err)
	require.NoError(t, g.Replay())
	assert.Equal(t, []float32{4, 8, 12, 16}, readFloats(t, s, z))
	require.NoError(t, g.Destroy())
}

// A capture belongs to its stream: while stream 1 records, other streams read, allocate,
// write and sync as usual, and the capture survives them. A read, on any stream, of a
// buffer that recorded work writes is refused with a clear error rather than returning
// bytes that work has not written yet (it runs when the graph is replayed).
func TestCaptureLeavesOtherStreamsAlone(t *testing.T) {
	d, _ := openDevice(t, server.Options{StagingChunk: 1 << 10})
	rec, other := d.On(1), d.On(2)
	x := upload(t, rec, 1, 2, 3, 4)
	y := alloc(t, rec, 16)
	a := upload(t, other, 5, 6, 7, 8)
	scale := func(s server.Stream, in, out *server.Buffer) error {
		return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	}
	require.NoError(t, scale(rec, x, y)) // warm: compiled, pools grown
	require.NoError(t, rec.Sync())

	require.NoError(t, rec.PrepareCapture())
	require.NoError(t, scale(rec, x, y))
	require.NoError(t, rec.BeginCapture())
	require.NoError(t, scale(rec, x, y))

	// Other streams: a small and a large read, an allocation, a write, a sync.
	assert.Equal(t, []float32{5, 6, 7, 8}, readFloats(t, other, a))
	big := alloc(t, other, 4<<10)
	require.NoError(t, other.Write(big, bytes.Repeat([]byte{7}, 4<<10)))
	got, err := other.Read(big)
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{7}, 4<<10), got)
	require.NoError(t, other.Sync())
	assert.Equal(t, []float32{5, 6, 7, 8}, readFloats(t, d.Stream, a))

	// The recorded output, from another stream: refused, clearly.
	_, err = other.Read(y)
	assert.ErrorIs(t, err, server.ErrRecorded)

	g, err := rec.EndCapture()
	require.NoError(t, err, "the capture survived the other streams' work")
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, other, y), "after the capture: the warm-up's result")
	require.NoError(t, rec.Write(x, floatBytes(10, 20, 30, 40)))
	require.NoError(t, g.Replay())
	assert.Equal(t, []float32{20, 40, 60, 80}, readFloats(t, other, y))
	require.NoError(t, g.Destroy())
}

// listsParams answers FuncGetParams for dev_scale as a compiler would lay it out (two
// pointers, a float, an unsigned), so the launch check runs on a platform that does not
// list parameters itself.
type listsParams struct{ hipsys.Platform }

func (listsParams) FuncGetParams(hipsys.Function) ([]hipsys.KernelParam, error) {
	return []hipsys.KernelParam{
		{Offset: 0, Size: 8, Kind: hipsys.ParamPointer, Name: "in"},
		{Offset: 8, Size: 8, Kind: hipsys.ParamPointer, Name: "out"},
		{Offset: 16, Size: 4, Kind: hipsys.ParamValue, Name: "a"},
		{Offset: 20, Size: 4, Kind: hipsys.ParamValue, Name: "n"},
	}, nil
}

// A launch whose arguments do not fit the kernel's parameters (too few, too many, a
// scalar of the wrong width) is refused at Launch, before anything is queued, and
// changes nothing: it never runs on a half-filled parameter block, and its failure
// never surfaces later on unrelated work.
func TestLaunchArgumentsCheckedAgainstTheKernel(t *testing.T) {
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	d, err := server.OpenPlatform(listsParams{p}, server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer d.Close()
	x := upload(t, d.Stream, 1, 2, 3, 4)
	for _, c := range []struct {
		name    string
		scalars []server.Scalar
	}{
		{"too few", []server.Scalar{server.F32(2)}},
		{"too many", []server.Scalar{server.F32(2), server.U32(4), server.U32(4)}},
		{"wrong width", []server.Scalar{server.F64(2), server.U32(4)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := upload(t, d.Stream, 9, 9, 9, 9)
			err := d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: c.scalars})
			assert.ErrorIs(t, err, server.ErrInvalidArgument)
			assert.Equal(t, []float32{9, 9, 9, 9}, readFloats(t, d.Stream, y), "a refused launch changes nothing")
			z := upload(t, d.Stream, 5, 6, 7, 8)
			assert.Equal(t, []float32{5, 6, 7, 8}, readFloats(t, d.Stream, z), "later work is untouched")
		})
	}
	y := alloc(t, d.Stream, 16)
	require.NoError(t, d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}}))
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, y))
}

// A capture whose run panics ends its window before the panic goes on: the stream can
// capture again.
func TestCapturePanicEndsTheWindow(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	x := upload(t, d.Stream, 1, 2, 3, 4)
	inc := func(s server.Stream) error {
		return s.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(4)}})
	}
	for _, recorded := range []bool{false, true} {
		runs := 0
		assert.PanicsWithValue(t, "boom", func() {
			_, _ = d.Capture(func(s server.Stream) error {
				if runs++; runs == 2 || !recorded {
					panic("boom")
				}
				return inc(s)
			})
		})
		g, err := d.Capture(inc)
		require.NoError(t, err, "the window was ended (panic while recording: %v)", recorded)
		require.NoError(t, g.Destroy())
	}
}

// A compile error speaks in the user's terms: the platform's compiler named, the log
// once, its lines citing the user's source, nothing of the wrapper the platform
// compiles the kernel in.
func TestCompileErrorInTheUsersTerms(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	src := "#include <hip/hip_runtime.h>\n\nextern \"C\" __global__ void dev_typo(float* x) {\n    x[0] = undeclared_name;\n}\n"
	err := d.Compile(server.NewKernel(src, "dev_typo", devBlock, []server.Access{server.Write}))
	require.ErrorIs(t, err, server.ErrCompilation)
	msg := err.Error()
	compiler := map[string]string{"cpu": "g++", "amd": "hiprtc", "nvidia": "NVRTC"}[d.Platform()]
	assert.Contains(t, msg, `kernel "dev_typo" failed to compile (`+compiler+")")
	assert.Equal(t, 1, strings.Count(msg, "undeclared_name;"), "the log once: %s", msg)
	assert.Regexp(t, `dev_typo\.hip[:(]4`, msg, "the line number is the user's line")
	for _, internal := range []string{"CUBEHIP_", "In lambda function", "hiprtcCompileProgram", "#include <hip/hip_runtime.h>"} {
		assert.NotContains(t, msg, internal)
	}
}

// A Sync of a stream while it records is refused with ErrCaptureState and no nil that
// would claim the recorded work ran: inside Capture, the warm-up's Sync waits for real
// and the recorded run's is refused, which ends the capture with no graph. A capture
// whose function does not sync is kept, and its replay then syncs as ever.
func TestSyncWhileRecordingIsRefused(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	s := d.On(1)
	x := upload(t, s, 1, 2, 3, 4)
	y := alloc(t, s, 16)
	scale := func(s server.Stream) error {
		return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	}
	runs := 0
	g, err := s.Capture(func(s server.Stream) error {
		runs++
		if err := scale(s); err != nil {
			return err
		}
		return s.Sync()
	})
	require.ErrorIs(t, err, server.ErrCaptureState)
	assert.ErrorContains(t, err, "records a capture")
	assert.Nil(t, g)
	assert.Equal(t, 2, runs, "the warm-up's Sync succeeded; the recorded run's was refused")

	require.NoError(t, s.PrepareCapture())
	require.NoError(t, scale(s))
	require.NoError(t, s.BeginCapture())
	require.NoError(t, scale(s))
	assert.ErrorIs(t, s.Sync(), server.ErrCaptureState)
	require.NoError(t, d.Sync(), "another stream syncs as ever")
	g, err = s.EndCapture()
	require.NoError(t, err, "the refused Sync left the recording intact")
	require.NoError(t, s.Write(y, floatBytes(0, 0, 0, 0)))
	require.NoError(t, g.Replay())
	require.NoError(t, s.Sync())
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, s, y))
	require.NoError(t, g.Destroy())
}
