package memory

// Reservations is how many reservations the manager has served since it was made, the
// ones that reused a free slice included: a caller that reads it twice knows whether
// the manager was used in between, and so whether its free pages are likely to be
// wanted again soon.
func (m *Manager) Reservations() uint64 { return m.reserveCount }

// Spare is the bytes of the pages that no live slice uses, lazy ones included: what an
// explicit cleanup would give back now, outside a capture. It walks every page.
func (m *Manager) Spare() uint64 {
	n := spareOf(&m.persistent.pages)
	for _, p := range m.pools {
		n += spareOf(p.pageSet())
	}
	return n
}

func spareOf(p *pages) uint64 {
	var n uint64
	for i := range p.list {
		pg := &p.list[i]
		if !pg.dead && len(pg.slices) > 0 && allFree(pg) {
			n += pg.storage.Size
		}
	}
	return n
}
