package server

import "fmt"

// Stream is one of a Device's logical streams: work on one stream runs in order, work
// on different streams may overlap, and a stream waits for the last write of every
// buffer it is given that another stream wrote. Ids are spread over the device's streams
// by id % Options.MaxStreams, so two ids may share one. A Stream is a small value,
// created by Device.On; it is safe to use from any number of goroutines.
type Stream struct {
	d  *Device
	id StreamID
}

// On returns stream id of the device; the device stream behind it is created on its
// first use.
func (d *Device) On(id StreamID) Stream { return Stream{d: d, id: id} }

// ID is the stream's id.
func (s Stream) ID() StreamID { return s.id }

// Device is the device the stream belongs to.
func (s Stream) Device() *Device { return s.d }

// Sync waits for the work queued on the stream so far. With buffers it first checks
// them as Check does and returns the failure one of them carries, without waiting. A
// device fault the work ran into is returned. The wait happens outside the device's lock.
func (s Stream) Sync(bufs ...*DeviceBuffer) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	bs, err := d.bindings(bufs, "sync")
	if err != nil {
		d.leave()
		return err
	}
	f := d.srv.Sync(bs, s.id)
	clear(bs)
	d.unlockToWait()
	defer d.exit()
	if err := f.Wait(); err != nil {
		return fmt.Errorf("sync of stream %d: %w", s.id, err)
	}
	return nil
}

// Check returns the failure the first of bufs carries: the error of the write, launch
// or replay that should have written it and did not. It does not touch the device and
// does not wait: work still running is judged by whether it was enqueued.
func (s Stream) Check(bufs ...*DeviceBuffer) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	bs, err := d.bindings(bufs, "check")
	if err != nil {
		return err
	}
	err = d.srv.Check(bs, s.id)
	clear(bs)
	return err
}

// Flush hands the stream's finished staging back and runs its deferred frees (the
// seed's flush). It may wait for the stream's earlier copies, under the lock. Its
// result is always nil, as in the seed: failures live on buffers.
func (s Stream) Flush() error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return d.srv.Flush(s.id)
}
