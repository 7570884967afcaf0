package memory

// exclusivePool keeps one allocation per page. Pages are sized from an
// exponential moving average of the requested sizes, so a stream of
// slightly different sizes reuses pages instead of allocating each one.
type exclusivePool struct {
	pages
	cfg       ExclusiveSpec
	ema       float64
	period    uint64 // reservations between periodic cleanups
	lastCheck uint64
}

const (
	emaDecay = 0.01
	// A page starts one cleanup away from being freed: a page that was
	// allocated for a one-off size goes back at the next periodic cleanup,
	// while every reuse buys it another cleanup.
	freeCountNew     = 4
	freeCountRelease = 5
)

func newExclusivePool(cfg ExclusiveSpec, pg pages) *exclusivePool {
	p := &exclusivePool{pages: pg, cfg: cfg, ema: float64(cfg.MaxAllocSize) / 2, period: never}
	if cfg.DeallocPeriod != 0 {
		p.period = cfg.DeallocPeriod / 5
	}
	return p
}

func (p *exclusivePool) pageSet() *pages { return &p.pages }

func (p *exclusivePool) spec() PoolSpec { return p.cfg }

func (p *exclusivePool) due() uint64 {
	if p.period > never-p.lastCheck {
		return never
	}
	return p.lastCheck + p.period
}

// accepts every size up to the maximum; the pool of maximum 0 serves the
// zero-size allocations, for which HIP hands back a null pointer.
func (p *exclusivePool) accepts(size uint64) bool { return size <= p.cfg.MaxAllocSize }

// tryReserve picks, among the free pages big enough, the one with the
// lowest free count: the most recently reused, so pages that sit idle keep
// aging toward release.
func (p *exclusivePool) tryReserve(size uint64, d *descriptor) bool {
	p.ema = p.ema*(1-emaDecay) + float64(size)*emaDecay
	best := -1
	for i := range p.list {
		pg := &p.list[i]
		if pg.storage.Size < size || !pg.slices[0].desc.free() {
			continue
		}
		if best < 0 || pg.freeCount < p.list[best].freeCount {
			best = i
		}
	}
	if best < 0 {
		return false
	}
	pg := &p.list[best]
	if pg.freeCount > 0 {
		pg.freeCount--
	}
	p.place(best, size, d)
	return true
}

func (p *exclusivePool) place(pi int, size uint64, d *descriptor) {
	eff, _ := effective(size, p.align)
	pg := &p.list[pi]
	pg.slices[0].foot = min(eff, pg.storage.Size)
	p.bind(pi, 0, size, d)
}

// alloc always maps eagerly: the page size depends on the moving average,
// which a lazy page would freeze at dry-run time.
func (p *exclusivePool) alloc(size uint64, d *descriptor, _ bool) error {
	if size > p.cfg.MaxAllocSize {
		return errTooBig(size)
	}
	want := max(uint64(p.ema), size)
	pageSize, ok := effective(want, p.align)
	if !ok {
		return errTooBig(size)
	}
	pi, err := p.newPage(pageSize, false)
	if err != nil {
		return err
	}
	p.list[pi].freeCount = freeCountNew
	p.list[pi].slices = append(p.list[pi].slices, slice{})
	p.place(pi, size, d)
	return nil
}

// cleanup ages free pages every period/5 reservations (or now, when
// explicit) and gives back those that stayed free long enough.
func (p *exclusivePool) cleanup(count uint64, explicit bool) {
	if !explicit && count-p.lastCheck < p.period {
		return
	}
	p.lastCheck = count
	p.removeIf(func(pg *page) bool {
		if !pg.slices[0].desc.free() {
			return false
		}
		pg.freeCount++
		return explicit || pg.freeCount >= freeCountRelease
	})
}
