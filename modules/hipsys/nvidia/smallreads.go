package nvidia

import "github.com/cubehip/cubehip/modules/hipsys"

var _ hipsys.SmallReadStager = (*Platform)(nil)

// StagesSmallReads is true: measured on H200 machines, a 4-byte read as
// cuMemcpyDtoHAsync into pinned memory followed by cuStreamSynchronize takes about a
// fifth less time than cuMemcpyDtoH into pageable memory, which stages through pinned
// memory of the driver's own (bench/waits.c; docs/benchmarks.md has the figures).
func (p *Platform) StagesSmallReads() bool { return true }
