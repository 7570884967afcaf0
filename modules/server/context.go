package server

import (
	"context"
	"fmt"
	"time"

	"github.com/cubehip/cubehip/modules/server/compute"
)

// The calls that wait for the device have Context variants (SyncContext,
// ReadIntoContext, ReadAtContext, ReadContext, Profile.StopContext, Graph.DestroyContext,
// CompileContext), as database/sql has QueryContext beside Query: the plain calls stay
// as they are for the many callers that never cancel, and pay nothing for a context.
//
// A cancelled context returns ctx.Err() at once. The device work the call queued is not
// taken back (HIP cannot cancel queued work): it finishes in the background, with the
// outcome it would have had, and every buffer ends as it would have without the
// cancellation: a later Sync, Check or Read sees exactly that. Close waits for such
// background waits. A context already done when the call starts queues nothing.

// await finishes a call that let the lock go with unlockToWait: it runs wait, and
// returns ctx.Err() as soon as ctx is done while wait goes on in the background. The
// call is counted in d.calls until wait has returned, so that Close waits for it.
func (d *Device) await(ctx context.Context, wait func() error) error {
	if ctx.Done() == nil {
		defer d.exit()
		return wait()
	}
	done := make(chan error, 1)
	go func() {
		err := wait()
		d.calls.Done()
		done <- err
	}()
	defer d.unlockThread()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SyncContext is Sync that returns ctx.Err() when ctx is done first.
func (s Stream) SyncContext(ctx context.Context, bufs ...*Buffer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
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
	before := d.srv.TakeFailure(s.id)
	clear(bs)
	d.unlockToWait()
	return d.await(ctx, func() error {
		err := syncResult(d.srv, s.id, f.Wait(), before)
		if err != nil && ctx.Err() != nil {
			// The caller may have gone with ctx.Err(): the failures this Sync took are
			// put back for the next one, which may report them twice, never not at all.
			d.srv.KeepFailure(s.id, before)
		}
		return err
	})
}

// ReadIntoContext is ReadInto that returns ctx.Err() when ctx is done first. dst is
// then left as it was: with a context that can be cancelled, the bytes land in memory
// of the call's own and are copied into dst only once the read has completed, so that
// nothing writes dst after the call returns (one more host copy than ReadInto).
func (s Stream) ReadIntoContext(ctx context.Context, dst []byte, src *Buffer) error {
	return s.ReadAtContext(ctx, dst, src, 0)
}

// ReadAtContext is ReadAt that returns ctx.Err() when ctx is done first, leaving dst as
// ReadIntoContext does.
func (s Stream) ReadAtContext(ctx context.Context, dst []byte, src *Buffer, offset uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() == nil {
		return s.ReadAt(dst, src, offset)
	}
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	if err := d.checkCopy(src, offset, len(dst), "read"); err != nil || len(dst) == 0 {
		d.leave()
		return err
	}
	f := d.srv.Read(d.linear(src, offset, len(dst)), s.id)
	d.desc[0] = compute.CopyDescriptor{}
	d.unlockToWait()
	own := make([]byte, len(dst))
	if err := d.await(ctx, func() error { return f.WaitInto(own) }); err != nil {
		return err
	}
	copy(dst, own)
	return nil
}

// ReadContext is Read that returns ctx.Err() when ctx is done first.
func (s Stream) ReadContext(ctx context.Context, src *Buffer) ([]byte, error) {
	if src == nil {
		return nil, fmt.Errorf("read: %w: nil buffer", ErrInvalidArgument)
	}
	out := make([]byte, src.size)
	if err := s.ReadIntoContext(ctx, out, src); err != nil {
		return nil, err
	}
	return out, nil
}

// StopContext is Stop that returns ctx.Err() when ctx is done first; the window is
// closed all the same, and its measurement dropped.
func (p *Profile) StopContext(ctx context.Context) (time.Duration, error) {
	if p == nil {
		return 0, fmt.Errorf("profile: %w: nil profile", ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		p.Abandon()
		return 0, err
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
	if err != nil {
		d.exit()
		return 0, err
	}
	var t time.Duration
	err = d.await(ctx, func() error {
		var err error
		t, err = f.Wait()
		return err
	})
	if err != nil {
		return 0, err
	}
	return t, nil
}

// DestroyContext is Destroy that returns ctx.Err() when ctx is done before the graph's
// stream is: the graph is gone for the caller at once (a later Replay or Destroy is
// ErrReleased) and is destroyed in the background once its work is done.
func (g *Graph) DestroyContext(ctx context.Context) error {
	if g == nil {
		return fmt.Errorf("destroy: %w: nil graph", ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	d := g.d
	if err := d.enter(); err != nil {
		return err
	}
	if g.gone {
		d.leave()
		return fmt.Errorf("destroy: %w: graph %d was destroyed", ErrReleased, g.id)
	}
	g.gone = true
	f := d.srv.Sync(nil, g.stream)
	d.unlockToWait()
	return d.await(ctx, func() error {
		_ = f.Wait() // the server's own wait below reports it where it belongs
		d.mu.Lock()
		defer d.mu.Unlock()
		if !d.closed { // else Close destroyed it
			d.srv.GraphDestroy(g.id, g.stream)
		}
		return nil
	})
}

// CompileContext is Compile that returns ctx.Err() when ctx is done first; the
// compile goes on in the background, and its kernel is cached for the next launch.
func (d *Device) CompileContext(ctx context.Context, k *Kernel) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() == nil {
		return d.Compile(k)
	}
	done := make(chan error, 1)
	go func() { done <- d.Compile(k) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
