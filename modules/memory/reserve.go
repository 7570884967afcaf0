package memory

import (
	"errors"
	"fmt"
)

// Reserve finds or allocates a slice of size bytes and returns an owning
// handle to it. The handle can be used as it is (pinned staging does) or
// passed to [Manager.Bind] to give the slice to a handle made earlier.
//
// Routing follows CubeCL: the persistent pool first when the mode or the
// size-match policy asks for it, then the first dynamic pool that accepts
// the size, which either reuses a free slice or grows; a capped pool that
// is full passes the request on to the next accepting pool. A failure
// leaves the pools as they were, apart from the periodic cleanup that runs
// first.
func (m *Manager) Reserve(size uint64) (Handle, error) {
	m.reserveCount++
	m.cleanup(false)
	// The pool slice's hold and the returned handle.
	d := m.rec.get(poolHold + oneHandle)
	if err := m.route(size, d); err != nil {
		d.state.Store(0)
		m.rec.put(d)
		return Handle{}, err
	}
	id := ID(d.id.Load())
	h := Handle{d: d, id: id, size: size, tok: newToken(m.leak, id, size, "handle")}
	if d.loc.Pool == PersistentPool {
		m.touch(h)
	}
	return h, nil
}

func (m *Manager) route(size uint64, d *descriptor) error {
	lazy := m.dryRun
	persistent := m.mode == ModePersistent
	if persistent || m.policy == PersistentSizeMatch {
		if m.persistent.tryReserve(size, d) {
			return nil
		}
	}
	if persistent || (m.policy == PersistentSizeMatch && m.persistent.hasBucket(size)) {
		return m.persistent.alloc(size, d, lazy)
	}
	var capErr error
	for i, p := range m.pools {
		if !p.accepts(size) {
			continue
		}
		if p.tryReserve(size, d) {
			return nil
		}
		err := p.alloc(size, d, lazy)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrPoolCapacityExceeded) {
			if capErr != nil {
				return capErr
			}
			return err
		}
		if !m.warned[i] {
			m.warned[i] = true
			m.log.Warn("memory: pool at capacity; spilling to the next pool", "pool", i, "spec", p.spec().String(), "err", err)
		}
		capErr = err
	}
	if capErr != nil {
		return capErr
	}
	return errTooBig(size)
}

// Bind gives the slice of reserved to assigned, as CubeCL's bind does:
// assigned's location becomes the slice's, the slice now belongs to
// assigned's family, and the cursor is stamped on it. The reserved handle is
// consumed (released and zeroed). On error nothing changes.
func (m *Manager) Bind(reserved *Handle, assigned Handle, cursor uint64) error {
	if !reserved.Valid() {
		return fmt.Errorf("%w: reserved handle %d", ErrReleased, reserved.id)
	}
	if !assigned.Valid() {
		return fmt.Errorf("%w: assigned handle %d", ErrReleased, assigned.id)
	}
	if assigned.d.loc.Bound {
		return fmt.Errorf("%w: handle %d at %s", ErrAlreadyBound, assigned.id, assigned.d.loc)
	}
	ps, reason := m.pageSetOf(reserved.d.loc)
	if reason != 0 {
		return &NotFoundError{ID: reserved.id, Location: reserved.d.loc, Reason: reason}
	}
	_, s, reason := ps.find(reserved.d.loc)
	if reason == 0 && s.desc != reserved.d {
		reason = StaleLocation
	}
	if reason != 0 {
		return &NotFoundError{ID: reserved.id, Location: reserved.d.loc, Reason: reason}
	}
	a := assigned.d
	a.take(poolHold)
	a.loc = reserved.d.loc
	a.cursor = cursor
	m.rec.drop(reserved.d) // the slice's hold on the throwaway family
	s.desc = a
	reserved.tok.stop()
	if refsOf(reserved.d.state.Add(-oneHandle)) == 0 { // the reserved handle itself
		m.rec.put(reserved.d)
	}
	*reserved = Handle{}
	if a.loc.Pool == PersistentPool {
		m.touch(assigned)
	}
	return nil
}
