package memory

import (
	"fmt"
	"slices"
)

// ImportedPool is the pool index of imported memory in a [Location]: it
// follows the highest dynamic pool index a layout can have.
const ImportedPool uint8 = maxDynamicPools

// importedPool holds memory the manager did not allocate (another library's
// allocation handed over without a copy). Each import is one page of one
// slice whose address was given, not allocated: the pool never asks the
// storage for it, never gives it back to the storage, never hands it to a
// reservation, and leaves it out of usage, reports and cleanup. A page whose
// last reference is gone waits for [Manager.ReclaimImports], which gives its
// owner back to the caller; slots are tombstoned and refilled, so the
// locations of the other imports never move.
type importedPool struct {
	pages
	owners []any // per page: what the importer asked to get back, nil for a tombstone
	bases  []uintptr
	live   int
	// holes are the tombstoned slots, refilled last-first: an import takes one without a
	// scan of the pages.
	holes []int
	// freed: the imports whose last user reference went (descriptor.hint), the only
	// ones ReclaimImports looks at; spare is the last batch's slice, reused.
	freed freeHints
	spare []*descriptor
	found []int
}

func newImportedPool(pg pages) *importedPool {
	pg.index = ImportedPool
	return &importedPool{pages: pg}
}

// Import makes size bytes at base, memory this manager did not allocate, an
// allocation of its own: the returned handle, its bindings and views work as
// those of a reservation do, and the manager resolves them to base without
// asking its storage. owner is returned by [Manager.ReclaimImports] once no
// handle or binding refers to the allocation any more; the manager never
// frees the memory itself. A zero base or size, or a range that wraps around
// the address space, fails with [ErrInvalidImport].
func (m *Manager) Import(base uintptr, size uint64, owner any) (Handle, error) {
	if base == 0 || size == 0 || uint64(base)+size-1 < uint64(base) {
		return Handle{}, fmt.Errorf("%w: %d bytes at %#x", ErrInvalidImport, size, base)
	}
	p := m.imported
	d := m.rec.get(poolHold + oneHandle)
	pg := page{storage: StorageHandle{Size: size}, slices: []slice{{foot: size}}}
	var pi int
	if n := len(p.holes); n > 0 {
		pi = p.holes[n-1]
		p.holes = p.holes[:n-1]
		p.list[pi] = pg
	} else {
		p.list = append(p.list, pg)
		p.owners = append(p.owners, nil)
		p.bases = append(p.bases, 0)
		pi = len(p.list) - 1
	}
	p.owners[pi], p.bases[pi] = owner, base
	p.live++
	p.peak = max(p.peak, p.live)
	p.bind(pi, 0, size, d)
	d.hint.Store(&p.freed)
	id := ID(d.id.Load())
	return Handle{d: d, id: id, size: size, tok: newToken(m.leak, id, size, "handle")}, nil
}

// ReclaimImports removes every imported allocation that no handle or binding
// refers to any more and appends their owners to out, in slot order. The
// caller decides when the memory is truly unused (the work queued on it
// done) before handing it back.
//
// Only the imports whose last user reference was given up since the last call are
// looked at (each release that leaves the pool's hold alone hints at its allocation),
// so the call costs what was released, not what is imported; each is checked as a scan
// would check it: a live import of this pool that nothing but the pool refers to.
func (m *Manager) ReclaimImports(out []any) []any {
	p := m.imported
	if p.live == 0 {
		return out
	}
	hinted := p.freed.take(p.spare)
	found := p.found[:0]
	for _, d := range hinted {
		loc := d.loc
		if loc.Pool != ImportedPool || int(loc.Page) >= len(p.list) {
			continue
		}
		pg := &p.list[loc.Page]
		if pg.dead || pg.slices[0].desc != d || !d.free() {
			continue // taken again since, reclaimed already, or another family now
		}
		found = append(found, int(loc.Page))
	}
	clear(hinted)
	p.spare = hinted
	slices.Sort(found)
	for i, pi := range found {
		if i > 0 && pi == found[i-1] {
			continue // hinted twice
		}
		out = append(out, p.owners[pi])
		p.kill(pi)
	}
	p.found = found
	return out
}

// DropImports removes every imported allocation, referenced or not, and
// appends their owners to out: the end of the manager, when nothing will
// use the memory again. References still held resolve to nothing after it.
func (m *Manager) DropImports(out []any) []any {
	p := m.imported
	for i := range p.list {
		if !p.list[i].dead {
			out = append(out, p.owners[i])
			p.kill(i)
		}
	}
	return out
}

// Imports is the number of imported allocations the manager holds,
// referenced or waiting for ReclaimImports.
func (m *Manager) Imports() int { return m.imported.live }

// kill tombstones slot i, dropping the pool's hold on its allocation.
func (p *importedPool) kill(i int) {
	pg := &p.list[i]
	p.rec.drop(pg.slices[0].desc)
	*pg = page{dead: true}
	p.owners[i], p.bases[i] = nil, 0
	p.live--
	p.holes = append(p.holes, i)
}

// resource resolves a range of slot pi: the imported base plus the offsets.
func (p *importedPool) resource(pi uint32, off, size uint64) Resource {
	return Resource{Base: p.bases[pi], Offset: off, Size: size}
}
