package memory

// directPool makes one storage allocation per reservation and reuses a
// freed one only for the exact same aligned size. Freed slots are
// tombstoned and refilled rather than removed, so locations never move.
type directPool struct {
	pages
	cfg DirectSpec
}

func (p *directPool) pageSet() *pages { return &p.pages }

func (p *directPool) spec() PoolSpec { return p.cfg }

func (p *directPool) due() uint64 { return never }

func (p *directPool) accepts(uint64) bool { return true }

// effective is what a reservation of size bytes allocates: size itself for an exact pool.
func (p *directPool) effective(size uint64) (uint64, bool) {
	if p.cfg.Exact {
		return size, true
	}
	return effective(size, p.align)
}

func (p *directPool) tryReserve(size uint64, d *descriptor) bool {
	eff, ok := p.effective(size)
	if !ok {
		return false
	}
	for pi := range p.list {
		pg := &p.list[pi]
		if !pg.dead && pg.storage.Size == eff && pg.slices[0].desc.free() {
			p.place(pi, size, eff, d)
			return true
		}
	}
	return false
}

func (p *directPool) place(pi int, size, eff uint64, d *descriptor) {
	p.list[pi].slices[0].foot = eff
	p.bind(pi, 0, size, d)
}

// alloc first reclaims free allocations, in index order, while the pool
// would pass its watermark; it is a watermark, not a budget, so the new
// allocation is made even if reclaiming could not get under it.
func (p *directPool) alloc(size uint64, d *descriptor, _ bool) error {
	eff, ok := p.effective(size)
	if !ok {
		return errTooBig(size)
	}
	if p.cfg.ReclaimAt != 0 {
		reserved := p.usage().BytesReserved
		for i := range p.list {
			if reserved+eff <= p.cfg.ReclaimAt {
				break
			}
			pg := &p.list[i]
			if pg.dead || !pg.slices[0].desc.free() {
				continue
			}
			reserved -= pg.storage.Size
			p.kill(pg)
		}
	}
	h, err := p.storage.Alloc(eff)
	if err != nil {
		return err
	}
	pg := page{storage: h, mapped: true, slices: []slice{{}}}
	pi, _ := p.slot(pg)
	p.peak = max(p.peak, p.count())
	p.place(pi, size, eff, d)
	return nil
}

// kill deallocates a free slot and tombstones it.
func (p *directPool) kill(pg *page) {
	p.release(pg)
	*pg = page{dead: true}
}

// cleanup ignores the periodic call; an explicit one frees every free
// allocation.
func (p *directPool) cleanup(_ uint64, explicit bool) {
	if !explicit {
		return
	}
	for i := range p.list {
		pg := &p.list[i]
		if !pg.dead && pg.slices[0].desc.free() {
			p.kill(pg)
		}
	}
}
