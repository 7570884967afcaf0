package hipsys

// SmallReadStager is a Platform whose small device-to-host reads are faster as an async
// copy into pinned memory followed by a wait for the copy's stream than as one blocking
// copy into pageable memory (MemcpyDtoH), which the driver stages through pinned memory
// of its own with bookkeeping around it. It is optional (nvidia has it; the server
// reads small buffers with MemcpyDtoH otherwise, as it does on the cpu platform, where a
// blocking copy is a memcpy).
type SmallReadStager interface {
	// StagesSmallReads reports whether the platform prefers the staged read.
	StagesSmallReads() bool
}
