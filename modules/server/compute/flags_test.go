package compute_test

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// flagger is the cpu platform with a launch queue that flags launches, as nvidia's does:
// the queue issues every launch on the caller's thread, a flagged one gets a fresh token,
// and StreamWaitFlag waits with StreamSynchronize. It checks what a real flag could not
// forgive: a wait on a token that is not the last thing queued on its stream (the flag
// would not cover the work queued after it) is a violation.
type flagger struct {
	hipsys.Platform
	mu         sync.Mutex
	next       uint32
	last       map[hipsys.Stream]uint32 // the stream's token, if its last queued work was a flagged launch
	flagged    int                      // launches flagged
	flagWaits  int                      // waits on a flag
	violations int
}

func newFlagger(p hipsys.Platform) *flagger {
	return &flagger{Platform: p, last: map[hipsys.Stream]uint32{}}
}

func (f *flagger) queued(s hipsys.Stream) {
	f.mu.Lock()
	delete(f.last, s)
	f.mu.Unlock()
}

func (f *flagger) counts() (flagged, waits, violations int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.flagged, f.flagWaits, f.violations
}

func (f *flagger) OpenLaunchQueue(int) (hipsys.LaunchQueue, error) { return flagQueue{f}, nil }

func (f *flagger) StreamWaitFlag(s hipsys.Stream, token uint32) error {
	f.mu.Lock()
	f.flagWaits++
	if token == 0 || f.last[s] != token {
		f.violations++
	}
	f.mu.Unlock()
	return f.Platform.StreamSynchronize(s)
}

// Everything the server queues on a stream ends what a flag covers.

func (f *flagger) ModuleLaunchKernel(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream, args *hipsys.KernelArgs) error {
	f.queued(s)
	return f.Platform.ModuleLaunchKernel(fn, grid, block, shmem, s, args)
}

func (f *flagger) ModuleLaunchCooperativeKernel(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream, args *hipsys.KernelArgs) error {
	f.queued(s)
	return f.Platform.ModuleLaunchCooperativeKernel(fn, grid, block, shmem, s, args)
}

func (f *flagger) MemcpyHtoDAsync(dst hipsys.DevicePtr, src hipsys.HostPtr, size uint64, s hipsys.Stream) error {
	f.queued(s)
	return f.Platform.MemcpyHtoDAsync(dst, src, size, s)
}

func (f *flagger) MemcpyDtoHAsync(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, s hipsys.Stream) error {
	f.queued(s)
	return f.Platform.MemcpyDtoHAsync(dst, src, size, s)
}

func (f *flagger) MemcpyDtoDAsync(dst, src hipsys.DevicePtr, size uint64, s hipsys.Stream) error {
	f.queued(s)
	return f.Platform.MemcpyDtoDAsync(dst, src, size, s)
}

func (f *flagger) MemsetAsync(dst hipsys.DevicePtr, value byte, size uint64, s hipsys.Stream) error {
	f.queued(s)
	return f.Platform.MemsetAsync(dst, value, size, s)
}

func (f *flagger) EventRecord(e hipsys.Event, s hipsys.Stream) error {
	f.queued(s)
	return f.Platform.EventRecord(e, s)
}

func (f *flagger) StreamWaitEvent(s hipsys.Stream, e hipsys.Event, flags uint32) error {
	f.queued(s)
	return f.Platform.StreamWaitEvent(s, e, flags)
}

// flagQueue issues every launch on the caller's thread (seq 0).
type flagQueue struct{ f *flagger }

func (q flagQueue) Launch(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal) (uint64, []hipsys.LaunchRefusal, error) {
	return 0, refused, q.f.ModuleLaunchKernel(fn, grid, block, shmem, s, args)
}

func (q flagQueue) LaunchFlagged(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal) (uint64, uint32, []hipsys.LaunchRefusal, error) {
	if err := q.f.ModuleLaunchKernel(fn, grid, block, shmem, s, args); err != nil {
		return 0, 0, refused, err
	}
	f := q.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	f.last[s] = f.next
	f.flagged++
	return 0, f.next, refused, nil
}

func (q flagQueue) Settle(refused []hipsys.LaunchRefusal) []hipsys.LaunchRefusal { return refused }
func (q flagQueue) Depth() int                                                   { return 1 }
func (q flagQueue) Close() error                                                 { return nil }

func newFlagEnv(t testing.TB) (*env, *flagger) {
	t.Helper()
	return newFlagEnvOwned(t, nil)
}

// newFlagEnvOwned is newFlagEnv for a server whose calls its owner serializes under owner.
func newFlagEnvOwned(t testing.TB, owner sync.Locker) (*env, *flagger) {
	t.Helper()
	var fl *flagger
	e := newEnvWith(t, func(p hipsys.Platform) hipsys.Platform {
		fl = newFlagger(p)
		return fl
	}, compute.Config{LaunchQueue: true, Owner: owner})
	return e, fl
}

func spinArgs(out compute.Binding, n uint64) *compute.Args {
	return &compute.Args{Buffers: []compute.Binding{out}, Scalars: []compute.Scalar{compute.U64(n)}}
}

func triangle(n uint64) uint32 { return uint32(n * (n - 1) / 2) }

// A launch-and-sync loop has its launches flagged and its syncs wait on the flags, once
// the first round has shown the pattern; every result is the launch's; and neither side
// allocates.
func TestFlagsForALaunchAndSyncLoop(t *testing.T) {
	e, fl := newFlagEnv(t)
	out := e.empty(0, 1)
	const rounds = 50
	for i := range rounds {
		n := uint64(100 + i)
		require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, n), 0, compute.Execute))
		require.NoError(t, e.srv.Sync(nil, 0).Wait())
	}
	flagged, waits, violations := fl.counts()
	assert.Equal(t, rounds-1, flagged, "every launch but the first")
	assert.Equal(t, rounds-1, waits, "every sync but the first")
	assert.Zero(t, violations)
	assert.Equal(t, triangle(100+rounds-1), readU32(t, e, out))

	args := spinArgs(out, 10)
	loop := func() {
		_ = e.srv.Launch(spin, compute.Static(1, 1, 1), args, 0, compute.Execute)
		_ = e.srv.Sync(nil, 0).Wait()
	}
	loop()
	loop()
	before, _, _ := fl.counts()
	assert.Zero(t, testing.AllocsPerRun(100, loop), "a flagged launch and its wait")
	after, _, violations := fl.counts()
	assert.Equal(t, before+101, after, "each launch flagged")
	assert.Zero(t, violations)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = e.srv.Sync(nil, 0).Wait() }), "a second Sync of the same work")
}

// readU32 is the first word of out.
func readU32(t testing.TB, e *env, out compute.Binding) uint32 {
	t.Helper()
	got, err := e.srv.Read([]compute.CopyDescriptor{compute.Linear(out, 4)}, 0).Wait()
	require.NoError(t, err)
	return binary.LittleEndian.Uint32(got[0])
}

// Runs of three launches between syncs: the third of each run is flagged, the sync waits
// on it; a run of another length is not flagged until it repeats.
func TestFlagsForRunsOfLaunches(t *testing.T) {
	e, fl := newFlagEnv(t)
	out := e.empty(0, 1)
	run := func(k int) {
		for j := range k {
			require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, uint64(10+j)), 0, compute.Execute))
		}
		require.NoError(t, e.srv.Sync(nil, 0).Wait())
	}
	for range 5 {
		run(3)
	}
	flagged, waits, _ := fl.counts()
	assert.Equal(t, 4, flagged)
	assert.Equal(t, 4, waits)
	run(2) // shorter: its second launch is not the third
	run(2)
	run(2)
	flagged, waits, violations := fl.counts()
	assert.Equal(t, 6, flagged, "the length changed, then repeated")
	assert.Equal(t, 6, waits)
	assert.Zero(t, violations)
	assert.Equal(t, triangle(11), readU32(t, e, out))
}

// A launch followed by a read, or by a write, is never flagged; and a flagged launch that
// something else followed on its stream before the wait is waited for by the driver.
func TestFlagsNotWhereWorkFollows(t *testing.T) {
	e, fl := newFlagEnv(t)
	out := e.empty(0, 1)
	other := e.empty(0, 1)
	for i := range 10 {
		n := uint64(50 + i)
		require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, n), 0, compute.Execute))
		got, err := e.srv.Read([]compute.CopyDescriptor{compute.Linear(out, 4)}, 0).Wait()
		require.NoError(t, err)
		require.Equal(t, triangle(n), binary.LittleEndian.Uint32(got[0]))
	}
	flagged, waits, _ := fl.counts()
	assert.Zero(t, flagged, "launch + read")
	assert.Zero(t, waits)
	// (On cpu a read finds the launch done and copies without a wait; on nvidia it
	// waits, and learns that the run queued a copy.)

	for range 4 { // learn launch + sync
		require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, 7), 0, compute.Execute))
		require.NoError(t, e.srv.Sync(nil, 0).Wait())
	}
	learned, waits, _ := fl.counts()
	require.GreaterOrEqual(t, learned, 2)
	require.Equal(t, learned, waits)
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, 9), 0, compute.Execute))
	flagged, _, _ = fl.counts()
	require.Equal(t, learned+1, flagged, "the launch is flagged")
	require.NoError(t, e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(other, 4), Data: []byte{1, 2, 3, 4}}}, 0).Wait())
	require.NoError(t, e.srv.Sync(nil, 0).Wait())
	_, after, violations := fl.counts()
	assert.Equal(t, waits, after, "a write followed it: the driver's wait")
	assert.Zero(t, violations)
	assert.Equal(t, triangle(9), readU32(t, e, out))
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, 9), 0, compute.Execute))
	require.NoError(t, e.srv.Sync(nil, 0).Wait())
	after, _, _ = fl.counts()
	assert.Equal(t, flagged, after, "the run had a write in it: no guess")
}

// A flagged launch whose wait fails (the device reports a fault there) leaves the
// launch's output failed, and a read of it returns the failure.
func TestFlagsAFailedWait(t *testing.T) {
	e, fl := newFlagEnv(t)
	out := e.empty(0, 1)
	for range 3 {
		require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, 5), 0, compute.Execute))
		require.NoError(t, e.srv.Sync(nil, 0).Wait())
	}
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, 6), 0, compute.Execute))
	e.f.FailNext("hipStreamSynchronize", 1, hipsys.ErrorLaunchFailure)
	err := e.srv.Sync(nil, 0).Wait()
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	_, waits, violations := fl.counts()
	assert.Equal(t, 3, waits, "the failed wait was the flag's")
	assert.Zero(t, violations)
	_, err = e.srv.Read([]compute.CopyDescriptor{compute.Linear(out, 4)}, 0).Wait()
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "the launch's output carries the failure")

	// A device that keeps failing its waits (a GPU after a fault): every Sync reports it,
	// each the driver's wait, never a flag that work after the fault may never write.
	e.f.Fail("hipStreamSynchronize", hipsys.ErrorLaunchFailure)
	for i := range 3 {
		require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, 7), 0, compute.Execute))
		assert.ErrorIs(t, e.srv.Sync(nil, 0).Wait(), hipsys.ErrorLaunchFailure, "sync %d", i)
	}
	e.f.Reset()
	_, after, _ := fl.counts()
	assert.Equal(t, waits, after, "no wait was a flag's while the device reported its fault")
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, 7), 0, compute.Execute))
	require.NoError(t, e.srv.Sync(nil, 0).Wait(), "the device works again")
}

// Goroutines launching and syncing at once, as the Device has them (calls under the
// owner's lock, waits outside it), each on a stream of its own and two on a shared one:
// every result is its launch's, and no wait takes a flag that does not cover its
// stream's last work (run under -race by scripts/test.sh).
func TestFlagsFromManyGoroutines(t *testing.T) {
	var owner sync.Mutex
	e, fl := newFlagEnvOwned(t, &owner)
	const workers, rounds = 6, 60
	outs := make([]compute.Binding, workers)
	for i := range outs {
		outs[i] = e.empty(compute.StreamID(i%5), 1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := compute.StreamID(w % 5) // workers 0 and 5 share stream 0
			for r := range rounds {
				n := uint64(20 + r + w)
				owner.Lock()
				err := e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(outs[w], n), id, compute.Execute)
				done := e.srv.Sync(nil, id)
				owner.Unlock()
				if err == nil {
					err = done.Wait()
				}
				if err != nil {
					errs <- err
					return
				}
				owner.Lock()
				read := e.srv.Read([]compute.CopyDescriptor{compute.Linear(outs[w], 4)}, id)
				owner.Unlock()
				got, err := read.Wait()
				if err != nil {
					errs <- err
					return
				}
				if v := binary.LittleEndian.Uint32(got[0]); v != triangle(n) {
					t.Errorf("worker %d round %d: %d, want %d", w, r, v, triangle(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	flagged, waits, violations := fl.counts()
	assert.Positive(t, flagged)
	assert.Positive(t, waits)
	assert.Zero(t, violations)
	t.Logf("%d launches flagged, %d waits on flags", flagged, waits)
}

// flagStager is the flagger claiming small reads staged (hipsys.SmallReadStager) and
// flagging their copies (hipsys.FlaggingCopier), as nvidia does.
type flagStager struct{ *flagger }

func (flagStager) StagesSmallReads() bool { return true }

func (f flagStager) MemcpyDtoHAsyncFlagged(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, s hipsys.Stream) (uint32, error) {
	if err := f.MemcpyDtoHAsync(dst, src, size, s); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	f.last[s] = f.next
	return f.next, nil
}

// A small read's copy is flagged and its wait takes the flag, from the first read; the
// launch before it is not flagged (the copy follows it); every read returns its launch's
// bytes.
func TestFlagsForSmallReads(t *testing.T) {
	var fl *flagger
	e := newEnvWith(t, func(p hipsys.Platform) hipsys.Platform {
		fl = newFlagger(p)
		return flagStager{fl}
	}, compute.Config{LaunchQueue: true})
	out := e.empty(0, 1)
	const rounds = 20
	for i := range rounds {
		n := uint64(30 + i)
		require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs(out, n), 0, compute.Execute))
		require.Equal(t, triangle(n), readU32(t, e, out))
	}
	flagged, waits, violations := fl.counts()
	assert.Zero(t, flagged, "no launch: a copy follows each")
	assert.Equal(t, rounds, waits, "each read waits on its copy's flag")
	assert.Zero(t, violations)
}
