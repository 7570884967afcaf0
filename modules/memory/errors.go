package memory

import (
	"errors"
	"fmt"
)

// Sentinels for errors.Is. The typed errors below match their sentinel.
var (
	// ErrNotFound: a lookup could not route a binding (CubeCL's
	// IoError::NotFound). See [NotFoundError] for the reason.
	ErrNotFound = errors.New("memory: binding not found")
	// ErrBufferTooBig: no pool can ever hold the size.
	ErrBufferTooBig = errors.New("memory: buffer too big")
	// ErrPoolCapacityExceeded: a capped pool is full; see [CapacityError].
	ErrPoolCapacityExceeded = errors.New("memory: pool capacity exceeded")
	// ErrStorageMappingFailed: a lazy dry-run page could not get real
	// backing; see [MappingError].
	ErrStorageMappingFailed = errors.New("memory: storage mapping failed")
	// ErrPoolsInUse: a new layout was refused; see [PoolsInUseError].
	ErrPoolsInUse = errors.New("memory: pools in use")
	// ErrInvalidLayout: a pool layout failed validation; see [LayoutError].
	ErrInvalidLayout = errors.New("memory: invalid pool layout")
	// ErrReleased: a handle or binding was used after its release.
	ErrReleased = errors.New("memory: reference released")
	// ErrInvalidImport: Import was given a null base, a zero size or a
	// range that wraps around the address space.
	ErrInvalidImport = errors.New("memory: invalid import")
	// ErrOutOfRange: offsets larger than the view they trim.
	ErrOutOfRange = errors.New("memory: offsets out of range")
	// ErrAlreadyBound: Bind was given a handle that already has a slice.
	ErrAlreadyBound = errors.New("memory: handle already bound")
)

// NotFoundReason says why a lookup failed.
type NotFoundReason uint8

const (
	NeverBound    NotFoundReason = iota + 1 // location never set
	StaleLocation                           // the slice now belongs to another allocation
	UnknownPool
	UnknownPage
	UnknownSlice
	Released // the reference was released
)

var notFoundText = [...]string{
	NeverBound:    "never bound",
	StaleLocation: "stale location",
	UnknownPool:   "unknown pool",
	UnknownPage:   "unknown page",
	UnknownSlice:  "unknown slice",
	Released:      "released",
}

func (r NotFoundReason) String() string {
	if int(r) < len(notFoundText) && notFoundText[r] != "" {
		return notFoundText[r]
	}
	return fmt.Sprintf("NotFoundReason(%d)", uint8(r))
}

// NotFoundError is a failed lookup of allocation ID at Location.
type NotFoundError struct {
	ID       ID
	Location Location
	Reason   NotFoundReason
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("memory: allocation %d not found (%s, %s)", e.ID, e.Reason, e.Location)
}

func (e *NotFoundError) Is(t error) bool { return t == ErrNotFound }

// CapacityError is CubeCL's PoolCapacityExceeded: a capped pool has all
// its pages and none of them has room for Size.
type CapacityError struct {
	Size, Capacity, InUse uint64
}

func (e *CapacityError) Error() string {
	return fmt.Sprintf("memory: pool capacity exceeded: %d bytes requested, capacity %d, %d in use",
		e.Size, e.Capacity, e.InUse)
}

func (e *CapacityError) Is(t error) bool { return t == ErrPoolCapacityExceeded }

// MappingError: materializing a lazy page of Size bytes failed with Err.
type MappingError struct {
	Size uint64
	Err  error
}

func (e *MappingError) Error() string {
	return fmt.Sprintf("memory: mapping a lazy page of %d bytes: %v", e.Size, e.Err)
}

func (e *MappingError) Is(t error) bool { return t == ErrStorageMappingFailed }
func (e *MappingError) Unwrap() error   { return e.Err }

// PoolsInUseError refuses a new layout while the old one holds live
// allocations; the old layout stays installed.
type PoolsInUseError struct {
	BytesInUse uint64
	Allocs     uint64
}

func (e *PoolsInUseError) Error() string {
	return fmt.Sprintf("memory: pools in use: %d bytes in %d allocations", e.BytesInUse, e.Allocs)
}

func (e *PoolsInUseError) Is(t error) bool { return t == ErrPoolsInUse }

// LayoutError is a pool layout that failed validation. Pool is the index
// of the offending entry, or -1 for the layout as a whole.
type LayoutError struct {
	Pool   int
	Reason string
}

func (e *LayoutError) Error() string {
	if e.Pool < 0 {
		return "memory: invalid pool layout: " + e.Reason
	}
	return fmt.Sprintf("memory: invalid pool layout: pool %d: %s", e.Pool, e.Reason)
}

func (e *LayoutError) Is(t error) bool { return t == ErrInvalidLayout }

func errTooBig(size uint64) error { return fmt.Errorf("%w: %d bytes", ErrBufferTooBig, size) }
