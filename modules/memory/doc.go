// Package memory manages device memory the way CubeCL's memory management
// does: pools of pages carved into slices, owning handles and non-owning
// bindings with explicit reference counts, allocation modes, capture
// support, usage and reports.
//
// # What it owns
//
// A [Manager] owns its pools and every page in them. It never talks to a
// device: it allocates through a [Storage] (alloc, dealloc, flush, resolve a
// resource), which the stream module backs with hipsys device memory and
// pinned host memory, and which tests back with memorytest.Storage. It does
// not order work across streams, track failures or record graphs; those
// belong to the stream module, which calls [Manager.CaptureBegin] and
// friends at the right moments. This package imports no other module of
// cubehip and builds with CGO_ENABLED=0.
//
// # Entry point and protocol
//
// [New] builds a manager over a storage for a device ([DeviceProps]: memory
// size and alignment) with a [Layout]: a [Preset] computed from the device
// (SubSlices by default, or ExclusivePages) or an explicit list of
// [SlicedSpec], [ExclusiveSpec] and [DirectSpec] pools, validated by
// [Layout.Resolve]. Then:
//
//   - [Manager.Reserve] returns an owning [Handle] to a fresh slice. It can
//     be used as it is, or given to a handle made earlier with
//     [Manager.NewHandle] through [Manager.Bind] (reserve-then-bind).
//   - [Handle.Binding] makes a [Binding], what kernels and copies receive;
//     [Manager.Resource] resolves it to a [Resource] (base address, offset,
//     size) with its offsets applied.
//   - [Handle.Release] and [Binding.Release] give references back. A slice
//     whose last user reference is gone is free for the next reservation.
//   - [Manager.Cleanup] gives free pages back to the storage.
//   - [Manager.Import] makes memory the manager did not allocate a handle
//     family of its own, and [Manager.ReclaimImports] hands back the owners
//     of the imports nothing references any more: the caller frees nothing
//     it did not allocate, and decides when the memory is truly unused.
//
// Routing, pools, modes and capture follow the digest of CubeCL (§4); the
// doc comment of each names what it keeps and the "Differs from CubeCL"
// comments mark every departure.
//
// # Lifetimes
//
// Differs from CubeCL: Go has no destructors, so every
// Handle and Binding is one reference that must be released exactly once;
// copying the struct does not add a reference. Pool reuse depends only on
// these counts, never on the garbage collector. [WithLeakReport] makes the
// collector report a reference dropped without Release.
//
// # Concurrency
//
// A Manager is not safe for concurrent use; it belongs to one goroutine (a
// stream's actor), as the seed's server does. Handles and bindings may be
// cloned, released and inspected from any goroutine; lookups and binds run
// on the manager's goroutine.
//
// # Errors
//
// Public APIs return errors and never panic on bad input. Errors match the
// sentinels ([ErrNotFound], [ErrBufferTooBig], [ErrPoolCapacityExceeded],
// [ErrStorageMappingFailed], [ErrPoolsInUse], [ErrInvalidLayout],
// [ErrReleased], [ErrInvalidImport]) with errors.Is, and the typed errors carry the detail.
// Storage errors are returned unwrapped, so a hipsys status stays
// matchable.
package memory
