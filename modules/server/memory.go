package server

import (
	"errors"

	"github.com/cubehip/cubehip/modules/memory"
)

// StreamReport is one stream's memory report.
type StreamReport struct {
	Stream StreamID
	Report memory.Report
}

// MemoryUsage is the device memory of every stream's pools, summed (pinned staging is
// not counted, as in CubeCL). A released buffer counts as in use while work that used it
// may still run: the borrowings of streams with nothing left to run are given back
// first.
func (d *Device) MemoryUsage() (memory.Usage, error) {
	var total memory.Usage
	err := d.Stream.do(func() error {
		d.srv.ReturnFinishedBorrowings()
		for _, id := range d.srv.StreamIDs() {
			u, err := d.srv.MemoryUsage(id)
			if err != nil {
				return err
			}
			total.NumberAllocs += u.NumberAllocs
			total.BytesInUse += u.BytesInUse
			total.BytesPadding += u.BytesPadding
			total.BytesReserved += u.BytesReserved
		}
		return nil
	})
	return total, err
}

// MemoryReport is each created stream's pool report, in stream order.
func (d *Device) MemoryReport() ([]StreamReport, error) {
	var out []StreamReport
	err := d.Stream.do(func() error {
		d.srv.ReturnFinishedBorrowings()
		for _, id := range d.srv.StreamIDs() {
			r, err := d.srv.MemoryReport(id)
			if err != nil {
				return err
			}
			out = append(out, StreamReport{Stream: id, Report: r})
		}
		return nil
	})
	return out, err
}

// Cleanup gives every stream's free pool memory back to the device (CubeCL's
// memory_cleanup on each stream), skipping what a recording capture holds. First it
// waits, outside the device's lock, for the work of every stream that used a buffer of
// another stream's pools: a released buffer's memory is free once that work is done, so
// after Cleanup the pools hold only the buffers the program still holds, the graphs'
// and a recording capture's. Then it waits for the streams' finished copies, under the
// lock.
func (d *Device) Cleanup() error {
	if err := d.settleBorrowings(); err != nil {
		return err
	}
	return d.Stream.do(func() error {
		var errs []error
		for _, id := range d.srv.StreamIDs() {
			errs = append(errs, d.srv.MemoryCleanup(id))
		}
		return errors.Join(errs...)
	})
}

// InstallPools sets the device pool layout: every created stream's pools are rebuilt
// (each after a cleanup; a stream with memory still in use keeps its layout and reports
// memory.ErrPoolsInUse), and streams created later get it. An invalid layout changes
// nothing.
func (d *Device) InstallPools(l memory.Layout) error {
	return d.Stream.do(func() error {
		ids := d.srv.StreamIDs()
		if len(ids) == 0 {
			return d.srv.InstallMemoryPools(l, 0)
		}
		var errs []error
		for _, id := range ids {
			errs = append(errs, d.srv.InstallMemoryPools(l, id))
		}
		return errors.Join(errs...)
	})
}

// MemoryUsage is the usage of this stream's device pools.
func (s Stream) MemoryUsage() (memory.Usage, error) {
	var u memory.Usage
	err := s.do(func() error {
		var err error
		u, err = s.d.srv.MemoryUsage(s.id)
		return err
	})
	return u, err
}

// MemoryReport is this stream's pool report.
func (s Stream) MemoryReport() (memory.Report, error) {
	var r memory.Report
	err := s.do(func() error {
		var err error
		r, err = s.d.srv.MemoryReport(s.id)
		return err
	})
	return r, err
}

// SetAllocationMode opens (memory.ModePersistent) or closes (memory.ModeAuto) a
// persistent window on the stream's pools: allocations inside it go to the persistent
// pool, which never shares a page with dynamic ones. Windows nest.
func (s Stream) SetAllocationMode(mode memory.Mode) error {
	return s.do(func() error { return s.d.srv.AllocationMode(mode, s.id) })
}

// Cleanup gives the stream's free pool memory back to the device. As Device.Cleanup, it
// first waits, outside the lock, for the work of every stream that used a buffer of
// another stream's pools, this stream's buffers among them.
func (s Stream) Cleanup() error {
	if err := s.d.settleBorrowings(); err != nil {
		return err
	}
	return s.do(func() error { return s.d.srv.MemoryCleanup(s.id) })
}

// settleBorrowings gives back every buffer that a stream's finished work used from
// another stream's pools (compute.Server.SettleBorrowings), waiting for that work
// outside the device's lock, as a Sync waits.
func (d *Device) settleBorrowings() error {
	if err := d.enter(); err != nil {
		return err
	}
	done := d.srv.SettleBorrowings()
	d.unlockToWait()
	defer d.exit()
	<-done
	return nil
}
