package memory

import "fmt"

// pageSetOf returns the pages of the pool a location names.
func (m *Manager) pageSetOf(loc Location) (*pages, NotFoundReason) {
	if !loc.Bound {
		return nil, NeverBound
	}
	switch loc.Pool {
	case PersistentPool:
		return &m.persistent.pages, 0
	case ImportedPool:
		return &m.imported.pages, 0
	}
	if int(loc.Pool) >= len(m.pools) {
		return nil, UnknownPool
	}
	return m.pools[loc.Pool].pageSet(), 0
}

// find is CubeCL's find(binding): the page and slice that the family of d
// occupies, or why there is none.
func (m *Manager) find(d *descriptor, id ID) (*pages, *page, *slice, error) {
	// A bound family whose only reference is the pool's own is free: any
	// copy still naming it was released, and must not reach the slice.
	if !d.live(id) {
		return nil, nil, nil, &NotFoundError{ID: id, Reason: Released}
	}
	loc := d.loc
	ps, reason := m.pageSetOf(loc)
	if reason != 0 {
		return nil, nil, nil, &NotFoundError{ID: id, Location: loc, Reason: reason}
	}
	pg, s, reason := ps.find(loc)
	if reason == 0 && s.desc != d {
		reason = StaleLocation
	}
	if reason != 0 {
		return nil, nil, nil, &NotFoundError{ID: id, Location: loc, Reason: reason}
	}
	return ps, pg, s, nil
}

// Resource resolves a binding to its storage range, offsets applied. A lazy
// page is mapped first (failure: [MappingError]); a binding that cannot be
// routed fails with a [NotFoundError]; a storage that lost the allocation
// returns its own error. It does not block.
func (m *Manager) Resource(b Binding) (Resource, error) {
	return m.resource(b.d, b.id, b.off)
}

// HandleResource is [Manager.Resource] for a handle.
func (m *Manager) HandleResource(h Handle) (Resource, error) {
	return m.resource(h.d, h.id, h.off)
}

// Locate returns the location of a binding's allocation, after checking
// that the allocation really owns it.
func (m *Manager) Locate(b Binding) (Location, error) {
	if _, _, _, err := m.find(b.d, b.id); err != nil {
		return Location{}, err
	}
	return b.d.loc, nil
}

func (m *Manager) resource(d *descriptor, id ID, off offsets) (Resource, error) {
	ps, pg, s, err := m.find(d, id)
	if err != nil {
		return Resource{}, err
	}
	if d.loc.Pool == ImportedPool {
		if off.start+off.end > s.size {
			return Resource{}, fmt.Errorf("%w: trimming %d+%d bytes from an import of %d", ErrOutOfRange, off.start, off.end, s.size)
		}
		return m.imported.resource(d.loc.Page, off.start, s.size-off.start-off.end), nil
	}
	if err := ps.materialize(pg); err != nil {
		return Resource{}, err
	}
	h := StorageHandle{ID: pg.storage.ID, Offset: pg.storage.Offset + s.offset, Size: s.size}
	// Trims larger than the slice are refused rather than wrapped: Narrow
	// bounds them by the handle's size, which may exceed a reused slice.
	if off.start+off.end > h.Size {
		return Resource{}, fmt.Errorf("%w: trimming %d+%d bytes from a slice of %d", ErrOutOfRange, off.start, off.end, h.Size)
	}
	h.Offset += off.start
	h.Size -= off.start + off.end
	return m.storage.Resource(h)
}
