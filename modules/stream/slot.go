package stream

import (
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
)

// Stream is one device stream and what CubeCL keeps per stream: its memory managers
// (device memory, and pinned host memory for staging), its drop queue, its capture
// state and its metadata info cache.
//
// A Stream is driven by one goroutine at a time (see [MultiStream]); only its cursors are
// read from other streams' goroutines.
type Stream struct {
	// The fields every launch touches come first, in the first 64 bytes, which _ below
	// keeps one cache line (see MultiStream): the capture's state is Capture's first field.
	m    *MultiStream
	slot int
	Sys  hipsys.Stream

	// cursor counts the commands resolved on this stream; done is the cursor of the
	// last command whose work is fully enqueued (Resolved.Close). Other streams read
	// done before recording an event here, so the event covers every write marked at
	// or before it.
	cursor  atomic.Uint64
	done    atomic.Uint64
	Drops   *DropQueue
	Capture Capture

	GPU           *memory.Manager
	GPUStorage    *DeviceStorage
	Pinned        *memory.Manager
	pinnedStorage *PinnedStorage
	Info          *InfoCache
	lastSynced    []uint64 // per slot: the origin's done cursor this stream last waited for
	waits         []int    // scratch: slots to wait on in one resolve
	pins          []Binding
	// deferred holds the bindings that closed commands borrowed from other streams and
	// that wait for a fence still to be recorded (Resolved.Close, pinBatch); behind a
	// pointer, which also fills the struct to 256 bytes, a size class whose objects start
	// on a cache line (TestStreamLayout).
	deferred *deferredPins
}

// deferredPins are a stream's borrowings waiting for a fence, and how many commands
// they came from.
type deferredPins struct {
	pins []Binding
	cmds int
}

// Slot is the stream's index in its MultiStream; ID(Slot()) maps back to it.
func (s *Stream) Slot() int { return s.slot }

// Cursor is the number of commands resolved on the stream so far.
func (s *Stream) Cursor() uint64 { return s.cursor.Load() }

// LastSynced is the origin slot's cursor up to which this stream has waited for it.
func (s *Stream) LastSynced(origin int) uint64 { return s.lastSynced[origin] }

// Bind gives reserved's slice to assigned (the client's handle), stamped with the
// stream's cursor. See [memory.Manager.Bind].
func (s *Stream) Bind(reserved *memory.Handle, assigned memory.Handle) error {
	return s.GPU.Bind(reserved, assigned, s.cursor.Load())
}

// FlushDrops runs one drop-queue flush cycle, unless the stream is recording a capture:
// the flush's host wait would invalidate it, so the queue just grows until the capture
// ends and flushes twice. It blocks until the previous flush's fence completes.
func (s *Stream) FlushDrops() error {
	if s.Capture.IsRecording() {
		return nil
	}
	return s.Drops.Flush(s.m.p, s.Sys)
}

// Drop hands r (holding size bytes that queued work still reads) to the drop queue, then
// flushes the queue when force is set (a large upload: CubeCL forces above 10 MiB) or
// the policy asks, unless the stream is recording. It blocks only when it flushes.
func (s *Stream) Drop(r Releaser, size uint64, force bool) error {
	s.Drops.Push(r, size)
	return s.FlushDropsIfDue(force)
}

// FlushDropsIfDue flushes the drop queue when force is set or the policy asks, unless
// the stream is recording; a launch calls it after enqueuing. Its error concerns the
// queue only (see DropQueue.Flush), never the work already enqueued.
func (s *Stream) FlushDropsIfDue(force bool) error {
	if (force || s.Drops.ShouldFlush()) && !s.Capture.IsRecording() {
		return s.Drops.Flush(s.m.p, s.Sys)
	}
	return nil
}

// Flush is the server's flush: a drop-queue flush and the device storage's deferred
// frees, both skipped while recording (a hipFree synchronizes the device). It blocks.
func (s *Stream) Flush() error {
	if s.Capture.IsRecording() {
		return nil
	}
	err := s.Drops.Flush(s.m.p, s.Sys)
	s.GPUStorage.Flush()
	return err
}

// Cleanup is the server's memory_cleanup: unless recording, flush the drop queue twice
// (freeing everything queued before the call) and drop the info-cache entries no graph
// pins; then the explicit cleanup of both managers (each a no-op while a capture is
// open). It also sheds the failure and write-order entries of dead allocations. It
// blocks.
func (s *Stream) Cleanup() error {
	var err error
	if !s.Capture.IsRecording() {
		err = s.Drops.Flush(s.m.p, s.Sys)
		if err2 := s.Drops.Flush(s.m.p, s.Sys); err == nil {
			err = err2
		}
		s.Info.ClearUnpinned()
	}
	s.GPU.Cleanup()
	s.Pinned.Cleanup()
	s.m.failures.ShedDead()
	s.m.marks.shedDead()
	return err
}
