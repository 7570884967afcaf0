package memory

// captureState is open between CaptureBegin and CaptureEnd.
type captureState struct {
	restore Mode
	touched map[ID]struct{}
	priming bool
	// retained keeps every slice handed out while priming busy, so the
	// warm-up grows the persistent pool to the whole working set instead of
	// recycling slices at their transient peak.
	retained []Handle
}

// CaptureBegin prepares for graph capture: reservations become persistent
// and are remembered, and cleanup stops (a free during capture would sync
// the device or take away a slice the replay reuses). A second call while a
// capture is open only forces the persistent mode again.
func (m *Manager) CaptureBegin() {
	if m.capture == nil {
		m.capture = &captureState{restore: m.mode, touched: make(map[ID]struct{}), priming: true}
	}
	m.mode = ModePersistent
}

// Capturing reports whether a capture is open.
func (m *Manager) Capturing() bool { return m.capture != nil }

// CapturePrimingEnd ends the warm-up: the slices it retained become free
// again but stay in the persistent pool, sized for the working set.
func (m *Manager) CapturePrimingEnd() {
	if m.capture == nil {
		return
	}
	m.capture.priming = false
	m.dropRetained()
}

// CaptureEnd closes the capture: the mode from before it (or from the
// SetMode calls made during it) comes back, and the returned handles own
// every touched persistent slice still in the pool. The caller pins them on
// the graph and releases them when the graph is destroyed; they carry no
// leak report. Without an open capture it returns nil.
func (m *Manager) CaptureEnd() []Handle {
	c := m.capture
	if c == nil {
		return nil
	}
	m.dropRetained()
	m.capture = nil
	m.mode = c.restore
	return m.persistent.retainTouched(c.touched)
}

func (m *Manager) dropRetained() {
	for i := range m.capture.retained {
		_ = m.capture.retained[i].Release()
	}
	m.capture.retained = nil
}

// touch records a slice handed out by the persistent path under its final
// identity.
func (m *Manager) touch(h Handle) {
	c := m.capture
	if c == nil {
		return
	}
	c.touched[h.id] = struct{}{}
	if c.priming {
		if clone, err := h.Clone(); err == nil {
			clone.tok.stop() // retained by the manager, released in CaptureEnd
			c.retained = append(c.retained, clone)
		}
	}
}
