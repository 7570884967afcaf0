package memory

// slicedPool carves pages into slices: first fit over the pages in order,
// coalescing free neighbours first, the remainder of a split left free
// right after the slice. Its pages have the spec's size, except an
// uncapped pool's first ones, which are smaller (nextPage).
type slicedPool struct {
	pages
	cfg      SlicedSpec
	pageSize uint64
	maxAlloc uint64
	maxPages int
	capped   bool
}

// maxSlicedPages is the most pages one sliced pool may hold, as CubeCL's
// u16 page index allows.
const maxSlicedPages = 65535

func newSlicedPool(cfg SlicedSpec, pg pages) *slicedPool {
	p := &slicedPool{pages: pg, cfg: cfg, pageSize: cfg.PageSize, maxPages: maxSlicedPages}
	if cfg.MaxPoolSize != 0 {
		p.capped = true
		// A cap below one page would make the pool useless: shrink the page
		// to the cap instead, keeping it aligned.
		if cfg.MaxPoolSize < p.pageSize {
			p.pageSize = max(cfg.MaxPoolSize/p.align*p.align, p.align)
		}
		p.maxPages = int(min(cfg.MaxPoolSize/p.pageSize, maxSlicedPages))
	}
	maxSlice := cfg.MaxSliceSize
	if maxSlice == 0 {
		maxSlice = p.pageSize
	}
	p.maxAlloc = min(maxSlice, p.pageSize)
	return p
}

func (p *slicedPool) pageSet() *pages { return &p.pages }

func (p *slicedPool) spec() PoolSpec { return p.cfg }

func (p *slicedPool) due() uint64 { return never }

// accepts takes sizes up to the largest slice, and, uncapped, sizes that
// waste less than a fifth of a whole page: those get a page of their own
// rather than falling through to a pool that would allocate exactly.
func (p *slicedPool) accepts(size uint64) bool {
	if size <= p.maxAlloc {
		return true
	}
	return !p.capped && size <= p.pageSize && (p.pageSize-size)*5 < p.pageSize
}

func (p *slicedPool) tryReserve(size uint64, d *descriptor) bool {
	eff, ok := effective(size, p.align)
	if !ok {
		return false
	}
	for pi := range p.list {
		if p.reserveIn(pi, size, eff, d) {
			return true
		}
	}
	return false
}

// reserveIn reserves the first free slice of page pi that fits, after
// merging it with the free slices that follow it.
//
// CubeCL coalesces the whole page first. Merging a run only when its first
// slice is too small picks the same slice at the same offset (a run is
// scanned in full before the scan moves past it), and lets the steady state
// of one size reuse its slice without touching the list.
func (p *slicedPool) reserveIn(pi int, size, eff uint64, d *descriptor) bool {
	pg := &p.list[pi]
	for si := 0; si < len(pg.slices); si++ {
		s := &pg.slices[si]
		if !s.desc.free() {
			continue
		}
		if s.foot < eff {
			p.mergeRun(pg, si)
			if s.foot < eff {
				continue
			}
		}
		rest := s.foot - eff
		s.foot = eff
		if rest > 0 {
			p.insertFree(pg, si+1, slice{offset: s.offset + eff, foot: rest})
		}
		p.bind(pi, si, size, d)
		return true
	}
	return false
}

// insertFree inserts a free slice at index at and renumbers the slices
// after it.
func (p *slicedPool) insertFree(pg *page, at int, s slice) {
	pg.slices = append(pg.slices, slice{})
	copy(pg.slices[at+1:], pg.slices[at:])
	pg.slices[at] = s
	for i := at + 1; i < len(pg.slices); i++ {
		if d := pg.slices[i].desc; d != nil {
			d.loc.Slice = uint32(i)
		}
	}
}

// mergeRun merges the free slices after slice si (itself free) into it.
func (p *slicedPool) mergeRun(pg *page, si int) {
	end := si + 1
	for end < len(pg.slices) && pg.slices[end].desc.free() {
		end++
	}
	if end == si+1 {
		return
	}
	s := &pg.slices[si]
	p.rec.drop(s.desc)
	s.desc, s.size = nil, 0
	for i := si + 1; i < end; i++ {
		s.foot += pg.slices[i].foot
		p.rec.drop(pg.slices[i].desc)
	}
	n := copy(pg.slices[si+1:], pg.slices[end:])
	clear(pg.slices[si+1+n:])
	pg.slices = pg.slices[:si+1+n]
	for i := si + 1; i < len(pg.slices); i++ {
		if d := pg.slices[i].desc; d != nil {
			d.loc.Slice = uint32(i)
		}
	}
}

// coalesce merges every run of adjacent free slices into its first slice.
// Without it a page freed piecewise would stay fragmented into the sizes it
// was first cut into, and large requests would never fit again.
func (p *slicedPool) coalesce(pg *page) {
	w := 0
	for r := range pg.slices {
		s := pg.slices[r]
		if w > 0 && s.desc.free() && pg.slices[w-1].desc.free() {
			prev := &pg.slices[w-1]
			p.rec.drop(prev.desc)
			p.rec.drop(s.desc)
			prev.desc, prev.size = nil, 0
			prev.foot += s.foot
			continue
		}
		if w != r {
			pg.slices[w] = s
			if s.desc != nil {
				s.desc.loc.Slice = uint32(w)
			}
		}
		w++
	}
	clear(pg.slices[w:])
	pg.slices = pg.slices[:w]
}

func (p *slicedPool) alloc(size uint64, d *descriptor, lazy bool) error {
	if p.capped && len(p.list) >= p.maxPages {
		return &CapacityError{
			Size:     size,
			Capacity: uint64(p.maxPages) * p.pageSize,
			InUse:    p.usage().BytesInUse,
		}
	}
	if len(p.list) >= maxSlicedPages {
		return &CapacityError{Size: size, Capacity: maxSlicedPages * p.pageSize, InUse: p.usage().BytesInUse}
	}
	eff, ok := effective(size, p.align)
	if !ok || eff > p.pageSize {
		return errTooBig(size)
	}
	pageSize := p.nextPage(eff)
	pi, err := p.newPage(pageSize, lazy)
	if err != nil {
		return err
	}
	p.list[pi].slices = append(p.list[pi].slices, slice{foot: pageSize})
	p.reserveIn(pi, size, eff, d)
	return nil
}

// firstPage is the smallest page an uncapped sliced pool starts with (rounded up to the
// alignment), the size of the segments PyTorch's caching allocator carves its small
// allocations from.
const firstPage = 2 << 20

// nextPage is the size of the page the pool adds for a slice of eff bytes: as large as
// the pool's pages together, so the pool doubles, from firstPage (or eff, if larger) up
// to the spec's page size.
//
// Differs from CubeCL, whose pool allocates whole pages from the first slice on. Each
// stream has pools of its own, and the pages of the default ladder's smallest rung grow
// with the device's memory: a stream that holds one small buffer kept a whole page for
// it, so a host that gives each of many threads a stream id reserved that page times
// the threads however little they used. Starting small and
// doubling keeps a small pool's reserve near what it holds, and costs a growing pool a
// few more allocations before it reaches full pages, after which nothing changes. A
// capped pool keeps whole pages: its cap counts them.
func (p *slicedPool) nextPage(eff uint64) uint64 {
	if p.capped {
		return p.pageSize
	}
	floor, _ := roundUp(firstPage, p.align)
	if p.pageSize <= floor {
		return p.pageSize
	}
	var held uint64
	for i := range p.list {
		held += p.list[i].storage.Size
	}
	return min(max(eff, held, floor), p.pageSize)
}

// cleanup runs only when explicit: sliced pages are reused, never aged.
// Fully free pages are given back and the survivors renumbered.
func (p *slicedPool) cleanup(_ uint64, explicit bool) {
	if !explicit {
		return
	}
	for i := range p.list {
		p.coalesce(&p.list[i])
	}
	p.removeIf(allFree)
}
