package memory

// Cleanup gives back every free page and allocation the pools can spare and
// flushes the storage's deferred frees. It is a no-op while a capture is
// open. Flushing may block: a GPU storage's hipFree synchronizes the device.
func (m *Manager) Cleanup() { m.cleanup(true) }

// cleanup is CubeCL's cleanup(explicit). Every reservation runs the
// periodic form, which is how deferred frees get flushed without an
// explicit cleanup.
func (m *Manager) cleanup(explicit bool) {
	if m.capture != nil {
		return
	}
	// Most reservations find no pool due and no free queued: skipping the
	// loop is what the reservation budget needs, and is exactly what the
	// pools would have done.
	if !explicit && !m.queued && m.reserveCount < m.due {
		return
	}
	if explicit {
		m.persistent.cleanup()
	}
	for _, p := range m.pools {
		p.cleanup(m.reserveCount, explicit)
	}
	m.schedule()
	// One flush stands for CubeCL's flush after each pool, and a periodic
	// cleanup flushes only when this manager queued a free since the last
	// one: every free of the pools goes through here, and the reservation
	// path then makes no storage call at all in steady state. An explicit
	// cleanup always flushes, for frees a caller queued on the storage
	// directly.
	if explicit || m.queued {
		m.storage.Flush()
		m.queued = false
	}
}

// InstallLayout replaces the dynamic pools. It runs an explicit cleanup
// first; if any dynamic pool still holds a live allocation it fails with
// [PoolsInUseError] and keeps the old layout. Otherwise the new pools
// start empty, with fresh peaks and capacity warnings. The persistent pool
// is untouched. An invalid layout fails with [LayoutError] before anything
// changes.
//
// Differs from CubeCL: a live zero-size allocation also refuses the
// install (CubeCL checks bytes only, and would strand the handle).
func (m *Manager) InstallLayout(l Layout) error {
	specs, err := l.Resolve(m.props)
	if err != nil {
		return err
	}
	m.cleanup(true)
	var u Usage
	for _, p := range m.pools {
		u = u.add(p.pageSet().usage())
	}
	if u.NumberAllocs > 0 {
		return &PoolsInUseError{BytesInUse: u.BytesInUse, Allocs: u.NumberAllocs}
	}
	for _, p := range m.pools {
		p.pageSet().removeIf(func(*page) bool { return true })
	}
	m.storage.Flush()
	m.build(specs)
	return nil
}
