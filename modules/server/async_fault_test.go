package server_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// deviceFaulter is a platform that can make work fail on the device after the call
// that queued it returned: the cpu platform's FailOnDevice.
type deviceFaulter interface {
	FailOnDevice(s hipsys.Stream, detail string) error
}

// faultingLaunches passes every call to the platform, and makes the armed launch fail
// on the device: the launch call succeeds, and the device reports the fault later, at
// the synchronizations that wait past it, as a GPU reports a kernel that traps.
type faultingLaunches struct {
	hipsys.Platform
	dev   deviceFaulter
	armed atomic.Int32 // launches to let through before the one that faults, plus one
}

func (w *faultingLaunches) ModuleLaunchKernel(f hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream, args *hipsys.KernelArgs) error {
	if err := w.Platform.ModuleLaunchKernel(f, grid, block, shmem, s, args); err != nil {
		return err
	}
	if w.armed.Load() > 0 && w.armed.Add(-1) == 0 {
		return w.dev.FailOnDevice(s, "the kernel trapped")
	}
	return nil
}

// openFaulting opens the test platform's device behind faultingLaunches, skipping where
// the platform cannot fault work on the device and recover: a GPU's device fault is
// sticky and would end the context of every later test in the process (the rule is the
// same there; see the package doc).
func openFaulting(t *testing.T, opts server.Options) (*server.Device, *faultingLaunches) {
	t.Helper()
	return openFaultingAs(t, opts, false)
}

// stagingFaults is faultingLaunches claiming hipsys.SmallReadStager: the Device then
// reads small buffers as it does on nvidia, an async copy into a pinned slot and a wait
// for the stream, and that wait is where the device reports the fault.
type stagingFaults struct{ *faultingLaunches }

func (stagingFaults) StagesSmallReads() bool { return true }

// openFaultingAs is openFaulting, the platform claiming to stage small reads if staged.
func openFaultingAs(t *testing.T, opts server.Options, staged bool) (*server.Device, *faultingLaunches) {
	t.Helper()
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	dev, ok := p.(deviceFaulter)
	if !ok {
		t.Skipf("platform %T cannot fault work on the device and recover", p)
	}
	w := &faultingLaunches{Platform: p, dev: dev}
	var over hipsys.Platform = w
	if staged {
		over = stagingFaults{w}
	}
	d, err := server.OpenPlatform(over, opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	return d, w
}

// A launch whose fault the device reports only at a later wait: the wait that reports
// it fails; the faulted launch's output carries the failure and never reads its old
// bytes. The platform's report does not say which work failed, so every buffer written
// on the stream since the last successful wait carries it too (here the output of a
// correct launch queued after the faulted one): an error, never wrong bytes. Buffers
// a successful Sync confirmed, and the launches' inputs, read right; the stream runs
// new work right; a rewritten output is clean again.
func TestAsyncLaunchFaultLandsOnTheUnconfirmedOutputs(t *testing.T) {
	for _, c := range []struct {
		name   string
		direct bool
		report func(d *server.Device, y, b *server.Buffer) error // the first wait past the fault
		staged bool                                              // small reads through pinned slots, as on nvidia
	}{
		{"Sync reports it/queued", false, func(d *server.Device, _, _ *server.Buffer) error { return d.Sync() }, false},
		{"Sync reports it/direct", true, func(d *server.Device, _, _ *server.Buffer) error { return d.Sync() }, false},
		{"a read of the faulted output reports it", false, func(d *server.Device, y, _ *server.Buffer) error { _, err := d.Read(y); return err }, false},
		{"a read of the other output reports it", true, func(d *server.Device, _, b *server.Buffer) error { _, err := d.Read(b); return err }, false},
		{"a staged read of the faulted output reports it", false, func(d *server.Device, y, _ *server.Buffer) error { _, err := d.Read(y); return err }, true},
		{"a staged read of the other output reports it", true, func(d *server.Device, _, b *server.Buffer) error { _, err := d.Read(b); return err }, true},
		// A wait inside another call: the module variable read waits for the whole
		// stream, where the cpu device reports the failure once and forgets it.
		{"a module variable read reports it", false, func(d *server.Device, _, _ *server.Buffer) error {
			_, err := d.Stream.ReadGlobal(globalsKernel, "kept")
			return err
		}, false},
		{"a write reports it", false, func(d *server.Device, _, _ *server.Buffer) error {
			big := alloc(t, d.Stream, 64<<10)
			return d.Write(big, make([]byte, 64<<10))
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, w := openFaultingAs(t, server.Options{DirectLaunch: c.direct, StagingChunk: 16 << 10, StagingDepth: 2}, c.staged)
			scale := func(in, out *server.Buffer) {
				require.NoError(t, d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}}))
			}
			x, a, n := upload(t, d.Stream, 1, 2, 3, 4), upload(t, d.Stream, 5, 6, 7, 8), upload(t, d.Stream, 9, 9, 9, 9)
			y, b := upload(t, d.Stream, -1, -1, -1, -1), upload(t, d.Stream, -2, -2, -2, -2)
			scale(n, n2(t, d)) // compiled: the fault hits a launch
			require.NoError(t, d.Compile(globalsKernel))
			require.NoError(t, d.Sync())

			w.armed.Store(1)
			scale(x, y) // faults on the device; the call cannot know
			scale(a, b) // correct, on other buffers, after it
			err := c.report(d, y, b)
			require.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "the wait that reports the fault fails")
			assert.ErrorContains(t, err, "the kernel trapped")

			_, err = d.Read(y)
			assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "the faulted launch's output carries its failure")
			assert.ErrorIs(t, d.Check(y), hipsys.ErrorLaunchFailure)
			_, err = d.Read(b)
			assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "written after the last confirmed point: not known good")
			for _, in := range []struct {
				b    *server.Buffer
				want []float32
			}{{x, []float32{1, 2, 3, 4}}, {a, []float32{5, 6, 7, 8}}, {n, []float32{9, 9, 9, 9}}} {
				assert.Equal(t, in.want, readFloats(t, d.Stream, in.b), "inputs and confirmed buffers are untouched")
			}
			if !strings.HasPrefix(c.name, "Sync") {
				assert.ErrorIs(t, d.Sync(), hipsys.ErrorLaunchFailure, "the stream's next Sync reports its work failed, though another call reported it first")
			}
			require.NoError(t, d.Sync(), "once: the cpu device runs on after a fault")

			scale(a, b)
			assert.Equal(t, []float32{10, 12, 14, 16}, readFloats(t, d.Stream, b), "rewritten: clean again")
			fresh := alloc(t, d.Stream, 16)
			scale(x, fresh)
			assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, fresh), "new work runs right")
		})
	}
}

// n2 is a scratch output.
func n2(t *testing.T, d *server.Device) *server.Buffer { return alloc(t, d.Stream, 16) }

// A graph whose replayed work faults on the device: the replay returns at enqueue time,
// the wait after it reports the fault, and the buffers the graph writes carry it; its
// input and a buffer a Sync confirmed before read right.
func TestAsyncReplayFaultLandsOnTheGraphOutputs(t *testing.T) {
	d, w := openFaulting(t, server.Options{})
	x, y, n := upload(t, d.Stream, 1, 2, 3, 4), alloc(t, d.Stream, 16), upload(t, d.Stream, 7, 7, 7, 7)
	require.NoError(t, d.Compile(devScale))
	require.NoError(t, d.Sync())
	w.armed.Store(2) // the warm-up's launch runs; the recorded one faults at every replay
	g, err := d.Capture(func(s server.Stream) error {
		return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	})
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	require.NoError(t, g.Replay())
	assert.ErrorIs(t, d.Sync(), hipsys.ErrorLaunchFailure, "the wait after the replay reports the fault")
	_, err = d.Read(y)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "the graph's output carries it")
	assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, d.Stream, x))
	assert.Equal(t, []float32{7, 7, 7, 7}, readFloats(t, d.Stream, n))
	require.NoError(t, g.Destroy())
}

// Many launches between waits, over a few outputs in turn (the server merges what it
// remembers of them): a successful Sync confirms them all; a fault after it lands on
// the outputs written since, each of them, and on none written only before.
func TestAsyncFaultAfterManyLaunches(t *testing.T) {
	d, w := openFaulting(t, server.Options{})
	x := upload(t, d.Stream, 1, 2, 3, 4)
	outs := []*server.Buffer{alloc(t, d.Stream, 16), alloc(t, d.Stream, 16), alloc(t, d.Stream, 16)}
	early := alloc(t, d.Stream, 16)
	scale := func(out *server.Buffer) {
		require.NoError(t, d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}}))
	}
	for i := range 500 {
		scale(outs[i%3])
		scale(early)
	}
	require.NoError(t, d.Sync(), "confirms all of them")
	for i := range 500 {
		if i == 250 {
			w.armed.Store(1)
		}
		scale(outs[i%2]) // outs[2] is not written after the Sync
	}
	assert.ErrorIs(t, d.Sync(), hipsys.ErrorLaunchFailure)
	for i, b := range outs[:2] {
		assert.ErrorIs(t, d.Check(b), hipsys.ErrorLaunchFailure, "output %d, written since the last successful wait", i)
	}
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, outs[2]), "confirmed before the fault")
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, early))
}

// An output that is read and written in place (ReadWrite, as `float* y` is inferred) is
// a write no wait has confirmed, like a Write output: a fault of its launch reported
// later leaves it carrying the failure, never its old bytes read as the launch's.
func TestAsyncFaultLandsOnAReadWriteOutput(t *testing.T) {
	d, w := openFaulting(t, server.Options{})
	y := upload(t, d.Stream, 1, 2, 3, 4)
	require.NoError(t, d.Compile(devInc))
	require.NoError(t, d.Sync())
	w.armed.Store(1)
	require.NoError(t, d.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{y}, Scalars: []server.Scalar{server.U32(4)}}))
	got, err := d.Read(y)
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "read %v", got)
	assert.ErrorIs(t, d.Check(y), hipsys.ErrorLaunchFailure)
}
