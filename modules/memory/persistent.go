package memory

// persistentPool keeps buckets of exact aligned sizes, one storage
// allocation per slice, and reuses a slice only for an identical size. It
// serves the persistent allocation mode and captured graphs: a graph
// replays fixed addresses, so its memory must come back at exactly the
// same size, never carved from a page whose layout might change.
type persistentPool struct {
	pages
	buckets map[uint64][]uint32 // aligned size → page indices
}

func newPersistentPool(pg pages) *persistentPool {
	pg.index = PersistentPool
	return &persistentPool{pages: pg, buckets: make(map[uint64][]uint32)}
}

// hasBucket reports whether size-match routing should send size here.
func (p *persistentPool) hasBucket(size uint64) bool {
	eff, ok := effective(size, p.align)
	return ok && len(p.buckets[eff]) > 0
}

func (p *persistentPool) tryReserve(size uint64, d *descriptor) bool {
	eff, ok := effective(size, p.align)
	if !ok {
		return false
	}
	for _, pi := range p.buckets[eff] {
		if p.list[pi].slices[0].desc.free() {
			p.place(int(pi), size, eff, d)
			return true
		}
	}
	return false
}

func (p *persistentPool) place(pi int, size, eff uint64, d *descriptor) {
	p.list[pi].slices[0].foot = eff
	p.bind(pi, 0, size, d)
}

// alloc has no size limit: the persistent mode is an explicit request for
// memory that outlives the dynamic pools' reuse policy. A lazy slice is
// mapped on first use.
func (p *persistentPool) alloc(size uint64, d *descriptor, lazy bool) error {
	eff, ok := effective(size, p.align)
	if !ok {
		return errTooBig(size)
	}
	pi, err := p.newPage(eff, lazy)
	if err != nil {
		return err
	}
	p.list[pi].slices = append(p.list[pi].slices, slice{})
	p.buckets[eff] = append(p.buckets[eff], uint32(pi))
	p.place(pi, size, eff, d)
	return nil
}

// cleanup, explicit only, frees every free slice and rebuilds the bucket
// index over the renumbered survivors.
func (p *persistentPool) cleanup() {
	p.removeIf(allFree)
	clear(p.buckets)
	for i := range p.list {
		eff := p.list[i].slices[0].foot
		p.buckets[eff] = append(p.buckets[eff], uint32(i))
	}
}

// retainTouched clones a handle to every slice whose current allocation
// was touched during a capture, so a graph keeps them out of reuse.
func (p *persistentPool) retainTouched(touched map[ID]struct{}) []Handle {
	var out []Handle
	for i := range p.list {
		d := p.list[i].slices[0].desc
		if d == nil {
			continue
		}
		id := ID(d.id.Load())
		if _, ok := touched[id]; !ok {
			continue
		}
		d.take(oneHandle)
		out = append(out, Handle{d: d, id: id, size: p.list[i].slices[0].size})
	}
	return out
}
