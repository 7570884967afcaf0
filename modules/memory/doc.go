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
// [New] builds a manager over a storage for a device with a [Layout]; a slice is
// reserved as an owning [Handle], lent to kernels and copies as a [Binding], and given
// back by releasing both. [Manager] gives the protocol step by step, imports included.
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
// Public APIs return errors and never panic on bad input. Errors match the package's
// Err sentinels with errors.Is, and the typed errors carry the detail. Storage errors are
// returned unwrapped, so a hipsys status stays matchable.
package memory
