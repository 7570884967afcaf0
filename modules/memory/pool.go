package memory

// pool is what the manager routes reservations through. Every pool keeps
// its allocations in pages; the variants differ in how they carve, reuse
// and give back pages.
type pool interface {
	// accepts reports whether the pool serves this size at all.
	accepts(size uint64) bool
	// tryReserve hands a free slice that fits size to d, without
	// allocating storage.
	tryReserve(size uint64, d *descriptor) bool
	// alloc grows the pool (a new page, or a lazy one) and hands the new
	// slice to d.
	alloc(size uint64, d *descriptor, lazy bool) error
	// cleanup gives back free storage; periodic calls (explicit false)
	// pass the manager's reservation count.
	cleanup(reserveCount uint64, explicit bool)
	// due is the reservation count at which a periodic cleanup next has
	// work, or never.
	due() uint64
	// pageSet exposes the shared page bookkeeping for lookups and usage.
	pageSet() *pages
	// spec is the resolved configuration, reported as the pool's kind.
	spec() PoolSpec
}

// newPool builds the pool for a resolved spec.
func newPool(spec PoolSpec, pg pages) pool {
	switch s := spec.(type) {
	case SlicedSpec:
		return newSlicedPool(s, pg)
	case ExclusiveSpec:
		return newExclusivePool(s, pg)
	case DirectSpec:
		return &directPool{pages: pg, cfg: s}
	}
	// Resolve admits only the three kinds above.
	panic("memory: unknown pool spec")
}
