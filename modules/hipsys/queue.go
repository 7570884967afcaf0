package hipsys

import (
	"errors"
	"fmt"
)

// LaunchQueuer is a Platform that can issue kernel launches from a thread of its own. It
// is optional (the nvidia platform has it; the layers above check with a type
// assertion and launch with ModuleLaunchKernel otherwise). It exists for one case: a
// loop of launches from a caller with bookkeeping of its own between them. Each launch
// from Go pays a cgo transition and the cache lines it evicts, and the driver charges a
// caller for every pause between its calls; a C thread that takes the launches from a
// ring keeps the driver fed at its own rate while the caller's Go work overlaps it.
// Through the queue a launch loop keeps the raw driver's pace, which plain calls from Go
// do not (docs/benchmarks.md, "The launch queue").
type LaunchQueuer interface {
	// OpenLaunchQueue takes device's launch queue. One holder at a time: a second open
	// before Close is hipErrorContextAlreadyInUse.
	OpenLaunchQueue(device int) (LaunchQueue, error)
}

// A LaunchQueue hands launches to a platform thread that issues them in order. Its
// contract has three parts.
//
// Order. Every other call of the platform, on any OS thread, first waits for the
// launches queued on its current device to be issued (handed to the driver, not run),
// so a queued launch is never overtaken: a copy, a sync or an event record that follows
// it in the program follows it on the device.
//
// Failures. What a queue changes is when a launch's refusal is known. A launch the
// platform issues on the caller's thread (Launch returns seq 0) answers at once, as
// ModuleLaunchKernel does; the driver's error for a queued launch comes back later,
// from a Launch or a Settle, numbered by the launch's seq. While a refusal is not yet
// returned, every launch is queued behind it, so a launch that answers at once always
// comes after every earlier refusal has been returned (at the latest, with it): its
// caller can tell whether it reads what a refused launch never wrote.
//
// Cost to other calls. With no queue held, a call reads one pointer. With one held and
// empty, it reads the queue's indices (two cache lines) and ends the holder's run of
// launches (a launch after another call is issued directly). With launches queued, it
// waits until they are issued: a queued launch the driver holds up (a stream's queue full
// behind a wait for an event not yet recorded) holds up every later call on the device,
// from any thread, until it is issued, where without the queue it would hold up only
// its own caller. Work that is ordered by events recorded before their waits, as the
// server's is, never meets that.
//
// A LaunchQueue is for its one holder, which serializes its calls.
type LaunchQueue interface {
	// Launch is ModuleLaunchKernel through the queue. What the platform checks before
	// the driver (the function and stream handles, the arguments' number and sizes
	// against the kernel's parameters: CheckArgs) is returned at once and queues nothing. A launch queued gets seq > 0, counting from 1 in queue
	// order; seq 0 means it was issued on the caller's thread and err is the driver's
	// answer. Which launches a platform issues directly is its own tuning (the nvidia
	// package's doc says when); it issues one directly only once every earlier refusal
	// has been returned.
	//
	// The refusals of earlier queued launches found while making room are appended to
	// refused and returned: a launch's refusal comes back no later than from the Launch
	// that queues the Depth()-th launch after it, or from the next Settle.
	Launch(fn Function, grid, block Dim3, sharedMemBytes uint32, stream Stream, args *KernelArgs,
		refused []LaunchRefusal) (seq uint64, _ []LaunchRefusal, err error)

	// Settle waits until every launch queued so far is issued and appends the refusals
	// not yet returned.
	Settle(refused []LaunchRefusal) []LaunchRefusal

	// Depth is the most launches the queue holds at once.
	Depth() int

	// Close settles the queue, returning the refusals not yet returned as one error,
	// and gives it up; the queue's thread stays, idle, for the next holder.
	Close() error
}

// LaunchRefusal is the driver's error for the queued launch numbered Seq.
type LaunchRefusal struct {
	Seq uint64
	Err error
}

// RefusalsError joins refusals into one error, each naming its launch ("queued launch 3:
// ..."); nil when there are none. What a LaunchQueue's Close returns.
func RefusalsError(refused []LaunchRefusal) error {
	errs := make([]error, len(refused))
	for i, r := range refused {
		errs[i] = fmt.Errorf("queued launch %d: %w", r.Seq, r.Err)
	}
	return errors.Join(errs...)
}
