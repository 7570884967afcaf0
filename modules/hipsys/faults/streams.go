package faults

import "github.com/cubehip/cubehip/modules/hipsys"

// Stream and event calls.

func (w *Platform) StreamCreateWithFlags(flags hipsys.StreamFlags) (hipsys.Stream, error) {
	if err := w.check(cStreamCreateWithFlags); err != nil {
		return 0, err
	}
	s, err := w.inner.StreamCreateWithFlags(flags)
	return created(w, liveStream, s, 0, err)
}

func (w *Platform) StreamQuery(stream hipsys.Stream) error {
	if err := w.check(cStreamQuery); err != nil {
		return err
	}
	return w.inner.StreamQuery(stream)
}

func (w *Platform) StreamSynchronize(stream hipsys.Stream) error {
	if err := w.check(cStreamSynchronize); err != nil {
		return err
	}
	return w.inner.StreamSynchronize(stream)
}

func (w *Platform) StreamWaitEvent(stream hipsys.Stream, event hipsys.Event, flags uint32) error {
	if err := w.check(cStreamWaitEvent); err != nil {
		return err
	}
	return w.inner.StreamWaitEvent(stream, event, flags)
}

func (w *Platform) StreamDestroy(stream hipsys.Stream) error {
	if err := w.check(cStreamDestroy); err != nil {
		return err
	}
	return destroyed(w, liveStream, stream, w.inner.StreamDestroy(stream))
}

func (w *Platform) EventCreateWithFlags(flags hipsys.EventFlags) (hipsys.Event, error) {
	if err := w.check(cEventCreateWithFlags); err != nil {
		return 0, err
	}
	e, err := w.inner.EventCreateWithFlags(flags)
	return created(w, liveEvent, e, 0, err)
}

func (w *Platform) EventRecord(event hipsys.Event, stream hipsys.Stream) error {
	if err := w.check(cEventRecord); err != nil {
		return err
	}
	return w.inner.EventRecord(event, stream)
}

func (w *Platform) EventQuery(event hipsys.Event) error {
	if err := w.check(cEventQuery); err != nil {
		return err
	}
	return w.inner.EventQuery(event)
}

func (w *Platform) EventSynchronize(event hipsys.Event) error {
	if err := w.check(cEventSynchronize); err != nil {
		return err
	}
	return w.inner.EventSynchronize(event)
}

func (w *Platform) EventElapsedTime(start, stop hipsys.Event) (float32, error) {
	if err := w.check(cEventElapsedTime); err != nil {
		return 0, err
	}
	return w.inner.EventElapsedTime(start, stop)
}

func (w *Platform) EventDestroy(event hipsys.Event) error {
	if err := w.check(cEventDestroy); err != nil {
		return err
	}
	return destroyed(w, liveEvent, event, w.inner.EventDestroy(event))
}
