package memory

// slice is one allocation inside a page. Size is what was asked for; foot
// is what the slice occupies (size plus alignment padding, or the whole
// remainder for a free slice), so padding = foot - size.
type slice struct {
	desc   *descriptor // nil: never handed out, free
	offset uint64
	size   uint64
	foot   uint64
}

// page is one storage allocation. The sliced pool carves it into slices;
// the other pools keep exactly one slice per page.
type page struct {
	storage   StorageHandle // Size is the page size even while unmapped
	mapped    bool          // false: a lazy dry-run page with no storage yet
	dead      bool          // direct pool tombstone, reused by the next alloc
	freeCount uint32        // exclusive pool: cleanups survived while free
	slices    []slice
}

// pages is the state every pool shares: its pages and the bookkeeping for
// lookups, usage and reports.
type pages struct {
	index   uint8 // this pool's routing index, written into locations
	list    []page
	peak    int
	largest uint64
	align   uint64
	rec     *recycler
	storage Storage
	queued  *bool // set when a free is queued: the manager's flush is due
}

// never is a reservation count no manager reaches.
const never = ^uint64(0)

func padding(size, align uint64) uint64 { return (align - size%align) % align }

// effective is the aligned footprint of size; ok is false if it overflows.
func effective(size, align uint64) (uint64, bool) {
	e := size + padding(size, align)
	return e, e >= size
}

// bind hands slice si of page pi to d, releasing the pool's hold on the
// family that had it before.
func (p *pages) bind(pi, si int, size uint64, d *descriptor) {
	s := &p.list[pi].slices[si]
	p.rec.drop(s.desc)
	s.desc = d
	s.size = size
	d.loc = Location{Pool: p.index, Page: uint32(pi), Slice: uint32(si), Bound: true}
	p.largest = max(p.largest, size)
}

// newPage appends a page of size bytes, allocating it unless lazy.
func (p *pages) newPage(size uint64, lazy bool) (int, error) {
	pg := page{storage: StorageHandle{Size: size}}
	if !lazy {
		h, err := p.storage.Alloc(size)
		if err != nil {
			return 0, err
		}
		pg.storage, pg.mapped = h, true
	}
	p.list = append(p.list, pg)
	p.peak = max(p.peak, p.count())
	return len(p.list) - 1, nil
}

// slot puts pg in the first dead page's slot, else at the end (appended), and returns
// its index: slots are reused so that page indexes, which handles name, stay small.
func (p *pages) slot(pg page) (i int, appended bool) {
	for i := range p.list {
		if p.list[i].dead {
			p.list[i] = pg
			return i, false
		}
	}
	p.list = append(p.list, pg)
	return len(p.list) - 1, true
}

// count is the number of live pages.
func (p *pages) count() int {
	n := 0
	for i := range p.list {
		if !p.list[i].dead {
			n++
		}
	}
	return n
}

// release deallocates a page's storage and drops the pool's hold on its
// (free) slices.
func (p *pages) release(pg *page) {
	if pg.mapped {
		p.storage.Dealloc(pg.storage.ID)
		*p.queued = true
	}
	for i := range pg.slices {
		p.rec.drop(pg.slices[i].desc)
	}
	pg.slices = pg.slices[:0]
	pg.mapped = false
}

// removeIf deallocates and removes the pages for which gone is true, then
// renumbers the survivors' locations: the descriptors are shared, so a
// binding held elsewhere follows its slice to the new index.
func (p *pages) removeIf(gone func(*page) bool) {
	w := 0
	for r := range p.list {
		pg := &p.list[r]
		if gone(pg) {
			p.release(pg)
			continue
		}
		if w != r {
			p.list[w] = *pg
			for i := range p.list[w].slices {
				if d := p.list[w].slices[i].desc; d != nil {
					d.loc.Page = uint32(w)
				}
			}
		}
		w++
	}
	clear(p.list[w:])
	p.list = p.list[:w]
}

// allFree reports whether no slice of pg is in use.
func allFree(pg *page) bool {
	for i := range pg.slices {
		if !pg.slices[i].desc.free() {
			return false
		}
	}
	return true
}

// find resolves a location to its page and slice.
func (p *pages) find(loc Location) (*page, *slice, NotFoundReason) {
	if int(loc.Page) >= len(p.list) || p.list[loc.Page].dead {
		return nil, nil, UnknownPage
	}
	pg := &p.list[loc.Page]
	if int(loc.Slice) >= len(pg.slices) {
		return nil, nil, UnknownSlice
	}
	return pg, &pg.slices[loc.Slice], 0
}

// materialize gives a lazy page real storage. It is a no-op for mapped
// pages.
func (p *pages) materialize(pg *page) error {
	if pg.mapped {
		return nil
	}
	h, err := p.storage.Alloc(pg.storage.Size)
	if err != nil {
		return &MappingError{Size: pg.storage.Size, Err: err}
	}
	pg.storage, pg.mapped = h, true
	return nil
}

// usage sums the pool's pages.
func (p *pages) usage() Usage {
	var u Usage
	for i := range p.list {
		pg := &p.list[i]
		if pg.dead {
			continue
		}
		u.BytesReserved += pg.storage.Size
		for j := range pg.slices {
			s := &pg.slices[j]
			if s.desc.free() {
				continue
			}
			u.NumberAllocs++
			u.BytesInUse += s.size
			u.BytesPadding += s.foot - s.size
		}
	}
	return u
}

// report fills the page counters of a PoolReport.
func (p *pages) report(spec PoolSpec) PoolReport {
	r := PoolReport{Spec: spec, Usage: p.usage(), PagesPeak: p.peak, LargestAlloc: p.largest}
	for i := range p.list {
		if p.list[i].dead {
			continue
		}
		r.Pages++
		if !p.list[i].mapped {
			r.PagesUnmapped++
		}
	}
	return r
}
