package server

import (
	"fmt"
	"time"

	"github.com/cubehip/cubehip/modules/server/compute"
)

// Profile is an open profiling window on a stream: the device's time between the
// moment it reached StartProfile and the moment it reaches Stop. Safe for concurrent
// use; Stop or Abandon it exactly once.
type Profile struct {
	d      *Device
	stream StreamID
	tok    compute.ProfileToken
	done   bool // guarded by d.mu
}

// StartProfile opens a profiling window where the stream is now, without waiting for
// it. Refused while the stream records a capture.
func (s Stream) StartProfile() (*Profile, error) {
	var tok compute.ProfileToken
	err := s.do(func() error {
		var err error
		tok, err = s.d.srv.StartProfile(s.id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Profile{d: s.d, stream: s.id, tok: tok}, nil
}

// Stop closes the window and waits (outside the device's lock) for the device to reach
// its end, then returns the device time the window spans. A failure inside the window
// (any work that failed on the device while it was open) makes it
// ErrProfileInvalidated: a failing candidate must not time near zero.
func (p *Profile) Stop() (time.Duration, error) {
	if p == nil {
		return 0, fmt.Errorf("profile: %w: nil profile", ErrInvalidArgument)
	}
	d := p.d
	if err := d.enter(); err != nil {
		return 0, err
	}
	if p.done {
		d.leave()
		return 0, fmt.Errorf("profile: %w: stopped or abandoned", ErrReleased)
	}
	p.done = true
	f, err := d.srv.EndProfile(p.stream, p.tok)
	d.unlockToWait()
	defer d.exit()
	if err != nil {
		return 0, err
	}
	return f.Wait()
}

// Abandon drops the window without measuring anything. Abandoning a stopped profile
// does nothing.
func (p *Profile) Abandon() {
	if p == nil {
		return
	}
	d := p.d
	if d.enter() != nil {
		return
	}
	defer d.leave()
	if !p.done {
		p.done = true
		d.srv.AbandonProfile(p.stream, p.tok)
	}
}

// Profile runs work and returns the device time the stream spent on what work put on
// it. A failure of work is returned and the window abandoned.
func (s Stream) Profile(work func() error) (time.Duration, error) {
	if work == nil {
		return 0, fmt.Errorf("profile: %w: nil work", ErrInvalidArgument)
	}
	p, err := s.StartProfile()
	if err != nil {
		return 0, err
	}
	if err := work(); err != nil {
		p.Abandon()
		return 0, err
	}
	return p.Stop()
}
