package memory

import "fmt"

// Mode is the allocation mode: where reservations go.
type Mode uint8

const (
	// ModeAuto routes through the dynamic pools.
	ModeAuto Mode = iota
	// ModePersistent routes through the persistent pool, whose slices are
	// reused only at the exact same size.
	ModePersistent
)

func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModePersistent:
		return "persistent"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// PersistentPolicy is CubeCL's persistent_memory setting.
type PersistentPolicy uint8

const (
	// PersistentEnabled: persistent only inside persistent windows.
	PersistentEnabled PersistentPolicy = iota
	// PersistentSizeMatch: also route automatic reservations whose aligned
	// size matches an existing persistent bucket.
	PersistentSizeMatch
	// PersistentDisabled: mode changes are ignored; always automatic.
	PersistentDisabled
	// PersistentEnforced: mode changes are ignored; always persistent.
	PersistentEnforced
)

func (p PersistentPolicy) String() string {
	switch p {
	case PersistentEnabled:
		return "enabled"
	case PersistentSizeMatch:
		return "size-match"
	case PersistentDisabled:
		return "disabled"
	case PersistentEnforced:
		return "enforced"
	}
	return fmt.Sprintf("PersistentPolicy(%d)", uint8(p))
}

// SetMode opens (ModePersistent) or closes (ModeAuto) a persistent window.
// Windows nest: the mode is persistent while any is open, and closing more
// than were opened is harmless. The disabled and enforced policies ignore
// the call. While a capture is open the resulting mode is kept for when
// the capture ends, because the capture itself must stay persistent.
func (m *Manager) SetMode(mode Mode) {
	if m.policy == PersistentDisabled || m.policy == PersistentEnforced {
		return
	}
	switch mode {
	case ModePersistent:
		m.depth++
	case ModeAuto:
		m.depth = max(m.depth-1, 0)
	default:
		return
	}
	effective := ModeAuto
	if m.depth > 0 {
		effective = ModePersistent
	}
	if m.capture != nil {
		m.capture.restore = effective
		return
	}
	m.mode = effective
}

// Mode returns the current allocation mode.
func (m *Manager) Mode() Mode { return m.mode }

// Policy returns the persistent-memory policy.
func (m *Manager) Policy() PersistentPolicy { return m.policy }
