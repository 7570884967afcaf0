package compute

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

// launchScratch is what every launch reuses, so that a steady stream of launches
// allocates nothing: the parameter block and the write scope's buffer lists.
type launchScratch struct {
	args    hipsys.KernelArgs
	reads   []Binding
	written []Binding
	used    []Binding // a replay's every buffer (graph.go)
}

// Launch is CubeCL's launch of k on stream id, in its order:
//
//  1. Compile k if this server never loaded it (memoized: a later launch pays a map
//     lookup). A compile failure leaves k's declared outputs carrying it, never the
//     buffers it only reads (failing those would refuse every later launch sharing
//     them, an autotune sweep above all), and is returned: differs from CubeCL, whose
//     launch returns nothing, so that the first call that can report a mistake in the
//     source does. A dry run fails nothing and only invalidates the open profiles.
//     There is no negative cache.
//  2. A dry run stops here, before anything touches a buffer: resolving resources,
//     uploading info or reading a dynamic count would materialize memory the run exists
//     to leave unmapped.
//  3. The count resolves before the scope opens (a dynamic one is read back from the
//     device, after checking the count buffer's failure: grid dimensions from bytes a
//     failure left unwritten would dispatch an absurd grid); a failure to resolve it
//     lands on the outputs.
//  4. A count with a zero dimension enqueues nothing and opens no scope, so the outputs'
//     claims are left exactly as they were.
//  5. The launch runs in a write scope that checks the Read buffers (a failed input skips
//     the launch and the outputs inherit its failure) and claims the outputs: the info
//     buffer is looked up or uploaded, every buffer resolved, the kernel launched with
//     the info pointer last. Success releases the outputs; a failure is carried by them.
//     Differs from CubeCL in cost only: when that scope would do nothing but advance
//     the stream's cursors (no failure or claim anywhere, no foreign write marked, every
//     buffer on stream id, no capture: stream.Quick), the launch skips it and advances
//     them itself, with the same outcome on success, failure and panic.
//
// Launch returns an error for a malformed call, which enqueues nothing: an unknown
// LaunchMode (no buffer touched), a nil kernel, a buffer list that does not match the kernel's IO, or arguments that do not
// fit the kernel's parameters where the platform lists them (the outputs, and any buffer
// the IO does not cover, then carry that error); and for a kernel that did not compile.
// Every other failure of the work itself is carried by the outputs, as in CubeCL, and
// every failure, returned or not, is reported once more by the stream's next Sync
// (TakeFailure).
//
// In steady state (kernel loaded, static count, info cached, all buffers on id's own
// stream) it allocates nothing.
//
// args is taken by reference so that a caller building it on its own stack hands down
// one word rather than ten; Launch reads it during the call only.
func (s *Server) Launch(k *Kernel, count CubeCount, args *Args, id StreamID, mode LaunchMode) error {
	if args == nil {
		args = &Args{}
	}
	if k == nil || len(args.Buffers) != len(k.IO) || mode > DryRun {
		return s.malformedLaunch(k, args.Buffers, id, mode)
	}
	s.carryLateFailures() // before the inputs' failures are looked at
	ck := s.kernels.get(k)
	if ck == nil {
		var err error
		if ck, err = s.loadForLaunch(k, args.Buffers, id, mode); ck == nil {
			return err
		}
	}
	if ck.params != nil {
		if err := ck.fits(k, args); err != nil {
			return s.unfitLaunch(k, args.Buffers, id, mode, err)
		}
	}
	if mode == DryRun {
		return nil
	}
	grid := hipsys.Dim3{X: count.X, Y: count.Y, Z: count.Z}
	if count.Dynamic != nil {
		s.settleQueue() // the count may come from a queued launch
		var ok bool
		if grid, ok = s.dynamicGrid(k, count, args.Buffers, id); !ok {
			return nil
		}
	}
	if grid.X == 0 || grid.Y == 0 || grid.Z == 0 {
		return nil
	}
	if st := s.streams.Quick(id, args.Buffers); st != nil {
		s.launchQuick(st, ck, k, grid, args, id)
		return nil
	}
	// The scope reads the failures: those of queued launches first (launchqueue.go).
	s.settleQueue()
	reads, written := s.splitIO(k, args.Buffers)
	s.launchScoped(ck, k, grid, args, id, reads, written)
	// The scratch lists hold uncounted views; cleared so they pin nothing for the GC.
	// (Not deferred: a deferred call is one more frame and its record, cache lines a
	// launch touches after the driver call; a panic leaves them pinned until the next.)
	s.clearIO()
	return nil
}

// The cold paths of Launch live out of line, so that its frame, which every launch
// writes and reads back after the driver call, stays small.

// malformedLaunch is Launch's error for an unknown mode (no buffer touched), a nil
// kernel or a buffer list that does not match the kernel's IO; for the last two the
// outputs, and any buffer the IO does not cover, carry it.
//
//go:noinline
func (s *Server) malformedLaunch(k *Kernel, buffers []Binding, id StreamID, mode LaunchMode) error {
	if mode > DryRun {
		return fmt.Errorf("%w: unknown launch mode %d (Execute or DryRun)", ErrInvalidArgument, mode)
	}
	if k == nil {
		return fmt.Errorf("%w: nil kernel", ErrInvalidArgument)
	}
	err := fmt.Errorf("%w: kernel %q declares %d buffers, launch gives %d", ErrInvalidArgument, k.Entry, len(k.IO), len(buffers))
	if k.Code != nil && len(k.IO) == 0 {
		// Compiled code declares nothing to read the access from: the caller says it.
		err = fmt.Errorf("%w: kernel %q of a compiled module declares no buffers, launch gives %d: a kernel of a compiled module: give IO (the access of each buffer)",
			ErrInvalidArgument, k.Entry, len(buffers))
	}
	if mode == Execute {
		s.failOutputs(k, buffers, id, err)
	}
	return err
}

// unfitLaunch is Launch's error for arguments that do not fit the kernel's parameters:
// refused before anything is queued, and carried by the outputs, as for a buffer count
// that does not match the kernel's access list.
//
//go:noinline
func (s *Server) unfitLaunch(k *Kernel, buffers []Binding, id StreamID, mode LaunchMode, err error) error {
	if mode == Execute {
		s.failOutputs(k, buffers, id, err)
	}
	return err
}

// loadForLaunch compiles or loads k on its first launch; nil when that failed, the
// failure then carried by k's outputs and returned (FailLaunch), or, for a dry run,
// invalidating the profiles.
//
//go:noinline
func (s *Server) loadForLaunch(k *Kernel, buffers []Binding, id StreamID, mode LaunchMode) (*compiled, error) {
	ck, err := s.kernels.load(k)
	if err == nil {
		return ck, nil
	}
	if mode == Execute {
		return nil, s.FailLaunch(k, buffers, id, err)
	}
	s.prof.failure(err)
	return nil, nil
}

// dynamicGrid resolves a dynamic count; false when it could not be read, the failure
// then carried by k's outputs.
//
//go:noinline
func (s *Server) dynamicGrid(k *Kernel, count CubeCount, buffers []Binding, id StreamID) (hipsys.Dim3, bool) {
	grid, err := s.resolveCount(count, id)
	if err != nil {
		s.failOutputs(k, buffers, id, err)
		return grid, false
	}
	return grid, true
}

// failOutputs is CubeCL's failed_writing for a launch that did not run: the buffers k
// writes (by its IO) take err, and the failure hook runs.
func (s *Server) failOutputs(k *Kernel, buffers []Binding, id StreamID, err error) {
	_, written := s.splitIO(k, buffers)
	s.streams.FailedWriting(id, written, err)
	s.clearIO()
}

func (s *Server) clearIO() {
	clear(s.launch.reads)
	clear(s.launch.written)
	clear(s.launch.used)
}

// splitIO sorts buffers into the scope's reads and writes by k's IO, into the scratch
// lists. A ReadWrite buffer is both: its bytes are an input, so a failure it carries
// stops the launch and stays on it (the launch queue's replay of a refusal reads it the
// same way, launchqueue.go), and it is written. A buffer the IO does not cover, or
// declares with an unknown Access, counts as written: a launch that never ran left it
// stale, whatever the kernel would have done with it.
func (s *Server) splitIO(k *Kernel, buffers []Binding) (reads, written []Binding) {
	reads, written = s.launch.reads[:0], s.launch.written[:0]
	for i := range buffers {
		a := Access(0)
		if i < len(k.IO) {
			a = k.IO[i]
		}
		if a == Read || a == ReadWrite {
			reads = append(reads, buffers[i])
		}
		if a != Read {
			written = append(written, buffers[i])
		}
	}
	s.launch.reads, s.launch.written = reads, written
	return reads, written
}

// resolveCount is the grid, host-read from the count buffer when it is dynamic. That
// read blocks the server's owner (HIP has no dynamic dispatch; CubeCL reads it too).
func (s *Server) resolveCount(c CubeCount, id StreamID) (hipsys.Dim3, error) {
	if c.Dynamic == nil {
		return hipsys.Dim3{X: c.X, Y: c.Y, Z: c.Z}, nil
	}
	// Differs from CubeCL: a count buffer shorter than three u32 is an error on the
	// outputs, not a panic (the buffer is user input).
	data, err := s.read([]CopyDescriptor{{Binding: *c.Dynamic, Shape: []int{3}, Strides: []int{1}, ElemSize: 4}}, id, false).Wait()
	if err != nil {
		return hipsys.Dim3{}, fmt.Errorf("%w: %w", ErrDynamicCount, err)
	}
	b := data[0]
	return hipsys.Dim3{X: binary.LittleEndian.Uint32(b), Y: binary.LittleEndian.Uint32(b[4:]), Z: binary.LittleEndian.Uint32(b[8:])}, nil
}

// launchScoped is the full path's launch inside its write scope (stream.Scope), which
// is opened and closed here rather than handed the launch as a closure, so that the path
// reads top to bottom in this package: Begin checks the inputs (a failed one skips the
// launch, the outputs then carrying its failure) and claims the outputs, launchChecked
// queues the launch, and End marks the outputs written by the stream and releases them,
// or leaves them carrying the launch's error. If the platform panics, Abandon leaves
// them claimed, as Execute does: a read then fails rather than return bytes nothing
// wrote.
func (s *Server) launchScoped(ck *compiled, k *Kernel, grid hipsys.Dim3, args *Args, id StreamID, reads, written []Binding) {
	sc, err := s.streams.Launching(id, reads, written).Begin()
	if err != nil {
		return
	}
	settled := false
	defer func() {
		if !settled {
			sc.Abandon()
		}
	}()
	err = s.launchChecked(ck, k, grid, args, id)
	settled = true
	_ = sc.End(err)
}

// launchChecked is CubeCL's launch_checked, run inside the launch's scope: its error
// is what the outputs carry.
func (s *Server) launchChecked(ck *compiled, k *Kernel, grid hipsys.Dim3, args *Args, id StreamID) error {
	r, err := s.streams.Resolve(id, args.Buffers)
	if err != nil {
		return err
	}
	defer r.Close()
	return s.enqueueLaunch(r.Stream(), ck, k, grid, args, id, false)
}

// launchQuick is the launch of a command stream.Quick admitted: every step of the scope
// and the resolve would have been a no-op but the cursors, which Quick and QuickDone
// advance as they would. The outputs carry a failure as Execute leaves them: carrying
// the error, or, if the platform panics, claimed, so that a read fails rather than
// return bytes nothing wrote.
func (s *Server) launchQuick(st *stream.Stream, ck *compiled, k *Kernel, grid hipsys.Dim3, args *Args, id StreamID) {
	settled := false
	defer func() {
		if !settled {
			// As the full path unwinds a panic: the resolve's close ends the command
			// (no write mark), and the scope leaves the outputs claimed.
			st.QuickDone(false)
			_, written := s.splitIO(k, args.Buffers)
			s.streams.Failures().Claim(written)
			s.clearIO()
		}
	}()
	err := s.enqueueLaunch(st, ck, k, grid, args, id, true)
	st.QuickDone(k.writes())
	settled = true
	if err != nil {
		s.failOutputs(k, args.Buffers, id, err)
	}
	if s.queue != nil && len(s.queue.refused) > 0 {
		s.applyRefused() // earlier launches', which came back with this one
	}
}

// enqueueLaunch is the launch itself on st, its buffers resolved there: the info buffer
// looked up or uploaded, every buffer's device address, the kernel launched with the
// info pointer last (through the launch queue on the fast path, when the server has
// one), then the drop queue flushed if its policy asks.
func (s *Server) enqueueLaunch(st *stream.Stream, ck *compiled, k *Kernel, grid hipsys.Dim3, args *Args, id StreamID, quick bool) error {
	var info hipsys.DevicePtr
	var owned *memory.Handle // an info buffer the cache did not keep
	var err error
	if args.HasInfo || len(args.Info) > 0 {
		if info, owned, err = s.infoBuffer(st, args.Info); err != nil {
			return err
		}
	}
	a := s.launch.args.Reset()
	for i := range args.Buffers {
		// Resolving is also where a dry run's deferred allocations get their device
		// backing, so this can fail on a device the measured plan does not fit.
		ptr, _, err := s.streams.Resource(args.Buffers[i])
		if err != nil {
			s.dropInfo(st, owned)
			return err
		}
		a.Ptr(ptr)
	}
	for _, sc := range args.Scalars {
		sc.append(a)
	}
	if args.HasInfo || len(args.Info) > 0 {
		a.Ptr(info)
	}
	// A shared stream's launches are issued before Launch returns: another library
	// queues on its native handle without the server seeing it, and what it queues after
	// the call must run after the launch (a queued launch would reach the driver later).
	// NativeStream settled the queue when it shared the stream, so nothing of this
	// stream is left in the queue to be overtaken.
	// A cooperative launch is issued here too: the queue issues plain launches only.
	ss := s.ledger.Of(st.Sys)
	switch {
	case k.Cooperative:
		err = s.p.ModuleLaunchCooperativeKernel(ck.fn, grid, k.Block, k.SharedMem, st.Sys, a)
	case quick && s.queue != nil && !ss.Shared():
		err = s.launchQueued(ck, k, grid, st.Sys, a, args.Buffers, id)
	default:
		err = s.p.ModuleLaunchKernel(ck.fn, grid, k.Block, k.SharedMem, st.Sys, a)
	}
	if owned != nil {
		s.dropInfo(st, owned)
	}
	if err != nil {
		return s.explain(launchError(k, err))
	}
	s.launched(k, args.Buffers, ss)
	if ferr := st.FlushDropsIfDue(false); ferr != nil {
		s.log.Warn("server: drop-queue flush after launch failed", "err", ferr)
	}
	return nil
}

//go:noinline
func launchError(k *Kernel, err error) error {
	return fmt.Errorf("server: launch %q: %w", k.Entry, err)
}

// infoBuffer is the device buffer holding words: reused from the stream's info cache
// (the info holds no pointers, so one buffer serves every launch and every kernel given
// the same words, and a stable-shape decode allocates and copies nothing inside a
// capture window), or uploaded. owned is non-nil when the cache did not keep the
// buffer: the caller hands it to the drop queue after the launch.
func (s *Server) infoBuffer(st *stream.Stream, words []uint64) (hipsys.DevicePtr, *memory.Handle, error) {
	look := st.Info.Lookup(st.Capture.CacheMode(), words)
	if look.Hit {
		res, err := st.GPU.HandleResource(look.Handle)
		if err != nil {
			return 0, nil, err
		}
		return hipsys.DevicePtr(res.Addr()), nil, nil
	}
	var bytes []byte
	if len(words) > 0 {
		// SAFETY: a view of words for the duration of the copy into pinned staging.
		bytes = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)
	}
	h, err := s.createWithData(st, bytes)
	if err != nil {
		return 0, nil, err
	}
	res, err := st.GPU.HandleResource(h)
	if err != nil {
		_ = h.Release()
		return 0, nil, err
	}
	ptr := hipsys.DevicePtr(res.Addr())
	if look.Store {
		st.Info.Store(words, h)
		return ptr, nil, nil
	}
	return ptr, &h, nil
}

// dropInfo hands an uncached info buffer to the drop queue: the launch may still read
// it, and the queue releases it after a fence that follows the launch.
func (s *Server) dropInfo(st *stream.Stream, h *memory.Handle) {
	if h == nil {
		return
	}
	if err := st.Drop(h, h.Size(), false); err != nil {
		s.log.Warn("server: drop-queue flush failed", "err", err)
	}
}
