package memory

// StorageID names one allocation of the backing storage (one hipMalloc, one
// hipHostMalloc). The storage chooses it; 0 is never a valid id.
type StorageID uint64

// StorageHandle is a byte range of one storage allocation.
type StorageHandle struct {
	ID     StorageID
	Offset uint64
	Size   uint64
}

// Resource is what a storage hands back for a [StorageHandle]: the base
// address of the allocation, the offset into it and the size of the range.
// Zero-size allocations may have a zero Base.
type Resource struct {
	Base   uintptr
	Offset uint64
	Size   uint64
}

// Addr is the address of the range's first byte.
func (r Resource) Addr() uintptr { return r.Base + uintptr(r.Offset) }

// Storage is the small interface the pools allocate through. The stream
// module backs it with hipsys device memory (frees deferred until Flush,
// because hipFree synchronizes the device) and with pinned host memory
// (alignment 16, Flush a no-op); this package's tests back it with
// memorytest.Storage.
//
// A manager calls its storage from the manager's goroutine only, so an
// implementation needs no locking of its own for this package's sake.
type Storage interface {
	// Alloc allocates size bytes and returns a handle to the whole
	// allocation (offset 0). Size 0 is legal; the resource may be null.
	Alloc(size uint64) (StorageHandle, error)
	// Dealloc releases an allocation. It may be deferred until Flush.
	Dealloc(id StorageID)
	// Flush carries out deferred deallocations. The manager never calls it
	// while a capture is open.
	Flush()
	// Resource resolves a range of a live allocation. An unknown id is an
	// error (CubeCL's StorageHandleNotFound).
	Resource(h StorageHandle) (Resource, error)
}
