// Package ledger is what the compute server infers about each device stream that the
// driver does not report, behind one boundary: whether the stream is idle, which of its
// calls carries a completion flag, whether a stream-wide wait may reach the driver while
// a capture is being recorded on it, which writes no wait has confirmed yet, which
// streams it was ordered after, and the failures of stream-wide waits that the next
// server call must still mark. One [Stream] per device stream, created with it (or on
// the first call that names it) and forgotten when it is destroyed ([Ledger.Forget]),
// shared by every logical stream id mapped onto it: ids that share a device stream
// share its work, so a fault that a wait of one id reports belongs to the writes of
// every id on that stream.
//
// Fast paths fail closed. Every inference here is one the server may act on without
// asking the driver (a blocking copy on a stream known idle, a wait on a completion flag
// instead of the stream's, a write taken as confirmed); where the ledger cannot show
// the inference holds, it answers "unknown", and the caller takes the slow path that is
// correct whatever the device did: the driver's own query or wait.
//
// The ledger calls no platform but the events of the capture guard ([Events]); the
// compute server's queue watch counts the calls it makes and reports them here.
package ledger

import (
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// Binding is a view of a written buffer, as the stream layer names it.
type Binding = stream.Binding

// Events are the platform calls the capture guard makes: an event recorded before a
// capture begins, which a wait during the capture waits for instead of the stream.
type Events interface {
	EventCreateWithFlags(flags hipsys.EventFlags) (hipsys.Event, error)
	EventRecord(event hipsys.Event, stream hipsys.Stream) error
	EventSynchronize(event hipsys.Event) error
	EventDestroy(event hipsys.Event) error
}

// Ledger holds one [Stream] per device stream of one server, and the points and late
// failures their confirmations share.
type Ledger struct {
	// last is the Stream looked up last (atomic): a launch loop's hit, one pointer read
	// instead of a map lookup that walks several nodes, each a likely cache miss after a
	// driver call.
	last atomic.Pointer[recent]

	// streams maps hipsys.Stream to *Stream; sync.Map's own locking. An entry is added by
	// Of or Open and removed by Forget, never replaced while present.
	streams sync.Map

	// events are the capture guard's calls; immutable after New.
	events Events

	// next is the last point handed out (atomic); points start at 1.
	next atomic.Uint64

	// mu guards every Stream's writes, waitedOn and lastKernel, and late: the one lock
	// every confirmation and failure takes, so that a failed wait and a confirming one
	// never split a write between them. Writes are recorded under the server's owner
	// lock; confirmations and failures come from futures outside it.
	mu sync.Mutex

	// late holds the failures of stream-wide waits made inside another call (a
	// fallback's wait, a pinned allocation's, a drop queue's), whose buffers are taken
	// but not yet marked: the wait may run under the stream layer's own locks, which
	// marking takes. The next server call marks them (TakeLate). Guarded by mu;
	// hasLate mirrors len(late) > 0 (atomic) so that a call with none pays one load.
	late    []Late
	hasLate atomic.Bool
}

// recent pairs a device stream with its Stream, immutable once published.
type recent struct {
	sys hipsys.Stream
	q   *Stream
}

// New is an empty ledger whose capture guards record their events through ev.
func New(ev Events) *Ledger { return &Ledger{events: ev} }

// Of is sys's Stream, created on the first call that names it: a stream the server
// never created (a test's, or one created before the ledger heard of it) starts
// unknown, which every fast path reads as "ask the driver".
func (l *Ledger) Of(sys hipsys.Stream) *Stream {
	if r := l.last.Load(); r != nil && r.sys == sys {
		return r.q
	}
	v, ok := l.streams.Load(sys)
	if !ok {
		fresh := &Stream{}
		fresh.recent = recent{sys, fresh}
		v, _ = l.streams.LoadOrStore(sys, fresh)
	}
	q := v.(*Stream)
	l.last.Store(&q.recent)
	return q
}

// Open records that the stream layer created sys for logical id (its slot's id): the
// id the failures of a wait on sys are reported under, whichever id queued the work.
func (l *Ledger) Open(id stream.ID, sys hipsys.Stream) {
	l.Of(sys).id.Store(uint64(id))
}

// Forget drops sys's Stream once the device stream is destroyed, and destroys its
// capture guard's event: the driver may hand the same handle to a stream created later,
// which must start unknown (not idle, not shared, nothing unconfirmed), not inherit what
// was inferred about the one before. A late failure already taken stays to be marked.
func (l *Ledger) Forget(sys hipsys.Stream) error {
	v, ok := l.streams.LoadAndDelete(sys)
	if r := l.last.Load(); r != nil && r.sys == sys {
		l.last.CompareAndSwap(r, nil)
	}
	if !ok {
		return nil
	}
	return v.(*Stream).guard.release(l.events)
}

// Close destroys every capture guard's event (the server's Close, with every wait
// over); the Streams stay, so that the device streams' own destruction finds them.
func (l *Ledger) Close() error {
	var first error
	l.streams.Range(func(_, v any) bool {
		if err := v.(*Stream).guard.release(l.events); err != nil && first == nil {
			first = err
		}
		return true
	})
	return first
}

// CertifyAll runs wait, a device-wide wait, and on success records every stream idle
// as of the snapshot taken before it (invariant 2).
func (l *Ledger) CertifyAll(wait func() error) error {
	type seen struct {
		q    *Stream
		snap uint64
	}
	var all []seen
	l.streams.Range(func(_, v any) bool {
		q := v.(*Stream)
		all = append(all, seen{q, q.snapshot()})
		return true
	})
	err := wait()
	if err == nil {
		for _, s := range all {
			s.q.SawIdle(s.snap)
		}
	}
	return err
}

// each calls f for every Stream; the caller holds mu when f reads what mu guards.
func (l *Ledger) each(f func(q *Stream) bool) {
	l.streams.Range(func(_, v any) bool { return f(v.(*Stream)) })
}
