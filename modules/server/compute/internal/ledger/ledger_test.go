package ledger

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

// fakeEvents are the capture guard's calls, counted: an event is live from its creation
// to its destruction, and a wait on one that is not live fails.
type fakeEvents struct {
	next     hipsys.Event
	live     map[hipsys.Event]bool
	recorded []hipsys.Stream
	synced   int
}

func newFakeEvents() *fakeEvents { return &fakeEvents{live: map[hipsys.Event]bool{}} }

func (f *fakeEvents) EventCreateWithFlags(hipsys.EventFlags) (hipsys.Event, error) {
	f.next++
	f.live[f.next] = true
	return f.next, nil
}

func (f *fakeEvents) EventRecord(e hipsys.Event, s hipsys.Stream) error {
	if !f.live[e] {
		return errors.New("record of a dead event")
	}
	f.recorded = append(f.recorded, s)
	return nil
}

func (f *fakeEvents) EventSynchronize(e hipsys.Event) error {
	if !f.live[e] {
		return errors.New("wait for a dead event")
	}
	f.synced++
	return nil
}

func (f *fakeEvents) EventDestroy(e hipsys.Event) error {
	if !f.live[e] {
		return errors.New("destroy of a dead event")
	}
	delete(f.live, e)
	return nil
}

// nullStorage backs the handles the tests make bindings of: never bound, so never called.
type nullStorage struct{}

func (nullStorage) Alloc(uint64) (memory.StorageHandle, error) {
	return memory.StorageHandle{}, errors.New("no storage")
}
func (nullStorage) Dealloc(memory.StorageID) {}
func (nullStorage) Flush()                   {}
func (nullStorage) Resource(memory.StorageHandle) (memory.Resource, error) {
	return memory.Resource{}, errors.New("no storage")
}

// bindings are n views of distinct allocations, released with the test.
func bindings(t *testing.T, n int) []Binding {
	t.Helper()
	m, err := memory.New(nullStorage{}, memory.DeviceProps{MemoryTotal: 1 << 30, Alignment: 32})
	require.NoError(t, err)
	out := make([]Binding, n)
	for i := range out {
		h := m.NewHandle(4)
		b, err := h.Binding()
		require.NoError(t, err)
		out[i] = Binding{Binding: b}
		t.Cleanup(func() { _ = b.Release(); _ = h.Release() })
	}
	return out
}

func ids(bs []Binding) []memory.ID {
	out := make([]memory.ID, 0, len(bs))
	for _, b := range bs {
		out = append(out, b.ID())
	}
	slices.Sort(out)
	return out
}

// The blame of a failure follows the device's order to a stream ordered after the
// failed one, for that stream's writes queued after the ordering: a buffer written
// there once before the ordering and again after it is taken (its last write may have
// used the failed work), one written only before it is not (it ran ahead of the wait,
// on bytes the failed work never touched). Judged by the first write instead of the
// last, the rewritten buffer would read as good: a silent wrong result where the device
// does not pass the failure on through the wait (a GPU whose failed wait was
// acknowledged before the other stream waited).
func TestTakeOrderedJudgesAWriteByItsLastPart(t *testing.T) {
	l := New(newFakeEvents())
	bs := bindings(t, 3)
	failedWork, rewritten, before := bs[0], bs[1], bs[2]
	failed, other := l.Of(hipsys.Stream(0xf1)), l.Of(hipsys.Stream(0xf2))
	l.Wrote(failed, failedWork)
	l.Wrote(other, rewritten)
	l.Wrote(other, before)
	l.OrderedAfter(other, failed)
	l.Wrote(other, rewritten)
	// A launch loop merges a buffer's entries into one, its first write and its last
	// (unconfirmed.merge): the judgement must hold for that entry.
	l.mu.Lock()
	other.writes.merge()
	require.Len(t, other.writes.writes, 2)
	l.mu.Unlock()

	took, taken := l.FailOrdered(failed)
	require.Equal(t, []*Stream{other}, took)
	require.Len(t, taken, 1)
	assert.Contains(t, ids(taken[0]), rewritten.ID(), "written after the ordering: its bytes may be the failed work's")
	assert.NotContains(t, ids(taken[0]), before.ID(), "written only before the ordering: untouched by the failed work")
}

// A destroyed device stream's entry goes with it, and so does its capture guard's
// event: a server that creates and destroys streams must not leak an event per stream
// it ever captured on, and a handle the driver hands out again names a new stream.
func TestForgetReleasesTheStreamAndItsGuardEvent(t *testing.T) {
	ev := newFakeEvents()
	l := New(ev)
	sys := hipsys.Stream(0xa1)
	l.Open(3, sys)
	q := l.Of(sys)
	require.Equal(t, stream.ID(3), q.ID())
	require.NoError(t, l.BeginCapture(q, func() error { return nil }))
	q.EndCapture()
	require.Len(t, ev.live, 1, "the event that marks the work before a capture")
	q.Share()
	require.NoError(t, l.Forget(sys))
	assert.Empty(t, ev.live, "the guard's event is destroyed with its stream")
	fresh := l.Of(sys)
	assert.NotSame(t, q, fresh)
	assert.False(t, fresh.Shared())
	assert.Equal(t, stream.ID(0), fresh.ID(), "a stream the layer never reported has no id")
	require.NoError(t, l.Close())
}

// model is the reference the random sequences check the ledger against: what each
// device stream's counts, waits, flags, capture and writes must say, written as plainly
// as the promise reads, with no merging, no snapshots and no shortcuts.
type model struct {
	streams []*modelStream
	bufs    []Binding
}

type modelStream struct {
	sys         hipsys.Stream
	queued      int  // calls begun
	inFlight    int  // calls begun, not ended
	certified   int  // queued as of the last certifying wait; -1: never
	shared      bool // Share was called
	flaggedCall int  // the call number of the last flagged call; 0: none since the last wait
	recording   bool
	// writes are the points of each buffer's unconfirmed writes, in order.
	writes map[memory.ID][]uint64
	// orderedAfter is, per stream this one waited for on the device, the point of the
	// first such wait no confirmation has covered.
	orderedAfter map[*modelStream]uint64
}

// TestLedgerRandomSequences drives the ledger with random sequences of what the server
// does to it (calls begun and ended, flagged launches, waits that succeed or fail,
// captures, writes, cross-stream orderings, shares, destruction) and checks after each
// step that its fast-path answers fail closed against the model: known idle only when
// nothing was queued since a certifying wait, a flag taken only when it covers the
// stream's last call, no stream-wide wait during a capture, a failed wait taking every
// write the model says it must and none the model says was confirmed, and a pending
// write always reported.
func TestLedgerRandomSequences(t *testing.T) {
	const (
		runs    = 200
		steps   = 300
		nStream = 3
		nBuf    = 6
	)
	bufs := bindings(t, nBuf)
	for run := range runs {
		seed := uint64(run)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 45))
			ev := newFakeEvents()
			l := New(ev)
			m := &model{bufs: bufs}
			for i := range nStream {
				sys := hipsys.Stream(0x100 + i)
				l.Open(stream.ID(i), sys)
				m.streams = append(m.streams, &modelStream{sys: sys, certified: -1, writes: map[memory.ID][]uint64{}, orderedAfter: map[*modelStream]uint64{}})
			}
			for step := range steps {
				i := r.IntN(nStream)
				ms := m.streams[i]
				q := l.Of(ms.sys)
				op := r.IntN(13)
				switch op {
				case 0: // a call that queues work, ended at once
					ms.queued++
					q.Begin()
					q.End()
					ms.flaggedCall = 0
				case 1: // a call begun and left in flight, ended later
					if ms.inFlight == 0 {
						ms.queued++
						ms.inFlight++
						q.Begin()
						ms.flaggedCall = 0
					} else {
						ms.inFlight--
						q.End()
					}
				case 2: // a launch through the queue, flagged when the guess says so
					ms.queued++
					n := q.Begin()
					require.Equal(t, uint64(ms.queued), n)
					flag := q.ExpectWait(n)
					if flag {
						assert.False(t, ms.shared, "a shared stream's launch is never flagged")
						q.Flagged(n, uint32(n))
						ms.flaggedCall = ms.queued
					} else {
						ms.flaggedCall = 0
					}
					q.End()
				case 3: // a stream-wide wait that succeeds
					point := l.Mark()
					reached := false
					whole, err := l.WaitGuarded(q, func() error {
						reached = true
						snap, token, onFlag := q.FlagWait()
						if onFlag {
							assert.Equal(t, ms.flaggedCall, ms.queued, "a flag is taken only when the flagged call was the stream's last")
							assert.Zero(t, ms.inFlight, "a flag is taken only with nothing in flight")
							assert.False(t, ms.shared, "a shared stream is never waited for on a flag")
							assert.Equal(t, uint32(ms.flaggedCall), token)
						}
						q.SawIdle(snap)
						return nil
					})
					require.NoError(t, err)
					ms.flaggedCall = 0
					assert.Equal(t, !ms.recording, reached, "no stream-wide wait reaches a capturing stream")
					assert.Equal(t, !ms.recording, whole)
					if whole {
						if ms.inFlight == 0 {
							ms.certified = ms.queued
						}
						l.Confirm(q, point)
						m.confirm(ms, point)
					}
				case 4: // a stream-wide wait that fails: its unconfirmed writes take the failure
					if ms.recording {
						continue
					}
					// A stream-wide wait fails past everything queued; a staging chunk's
					// event wait fails at the point of its copy, which may be earlier.
					point := l.Mark()
					if r.IntN(2) == 0 {
						point = 1 + r.Uint64N(point)
					}
					got := l.Fail(q, point, nil)
					must, may := m.fail(ms, point, func(id memory.ID) bool { return l.holds(q, id) })
					assert.Subset(t, ids(got), must, "a failed wait takes every write before it that no wait confirmed")
					assert.Subset(t, may, ids(got), "a failed wait takes no write a wait confirmed")
				case 5: // a failure late: every unconfirmed write, and those ordered after
					if ms.recording {
						continue
					}
					own := ids(m.pending(ms))
					l.FailLate(q, func(stream.ID, *string) error { return errors.New("late") })
					l.mu.Lock()
					assert.Empty(t, q.writes.writes, "a failed stream-wide wait takes every unconfirmed write of its stream")
					l.mu.Unlock()
					// A buffer written in several entries is taken once per entry.
					taken := map[*modelStream]map[memory.ID]bool{}
					for _, f := range l.TakeLate() {
						mo := m.of(f.On.Sys())
						if taken[mo] == nil {
							taken[mo] = map[memory.ID]bool{}
						}
						for _, b := range f.Writes {
							taken[mo][b.ID()] = true
						}
					}
					var took []memory.ID
					for mo, set := range taken {
						for id := range set {
							if mo == ms {
								took = append(took, id)
							}
							assert.NotEmpty(t, mo.writes[id], "a late failure takes only unconfirmed writes")
							// Taken: carried from now on. A stream ordered after the failed
							// one keeps the entries of the buffer queued before its ordering
							// (another entry of the same buffer): those stay unconfirmed.
							if mo == ms || !l.holds(l.Of(mo.sys), id) {
								delete(mo.writes, id)
							}
						}
					}
					assert.ElementsMatch(t, own, took, "a late failure takes its own stream's unconfirmed writes")
					clear(ms.writes)
					// The orderings that made streams suspect are forgotten with the blame
					// they carried; the model no longer holds the ledger to any.
					for _, s := range m.streams {
						clear(s.orderedAfter)
					}
				case 6, 7: // writes
					b := bufs[r.IntN(nBuf)]
					if op == 6 {
						l.Wrote(q, b)
					} else {
						entry := "k"
						Launched(l, q, &entry, []Binding{b}, []int{2}, 1)
					}
					m.wrote(ms, b.ID(), l.next.Load())
				case 8: // a cross-stream wait: this stream after another's work
					src := m.streams[r.IntN(nStream)]
					if src == ms {
						continue
					}
					l.OrderedAfter(q, l.Of(src.sys))
					if _, ok := ms.orderedAfter[src]; !ok {
						ms.orderedAfter[src] = l.next.Load()
					}
				case 9: // a capture begins or ends
					if ms.recording {
						q.EndCapture()
					} else {
						require.NoError(t, l.BeginCapture(q, func() error { return nil }))
					}
					ms.queued++
					q.Begin()
					q.End()
					ms.flaggedCall = 0
					ms.recording = !ms.recording
				case 10:
					q.Share()
					ms.shared = true
				case 11: // a device-wide wait
					if slices.ContainsFunc(m.streams, func(s *modelStream) bool { return s.recording }) {
						continue
					}
					require.NoError(t, l.CertifyAll(func() error { return nil }))
					for _, s := range m.streams {
						if s.inFlight == 0 {
							s.certified = s.queued
						}
					}
				case 12: // the device stream destroyed and a new one made on its handle
					if ms.inFlight != 0 || ms.recording || step%7 != 0 {
						continue
					}
					require.NoError(t, l.Forget(ms.sys))
					for _, s := range m.streams {
						delete(s.orderedAfter, ms)
					}
					l.Open(stream.ID(i), ms.sys)
					*ms = modelStream{sys: ms.sys, certified: -1, writes: ms.writes, orderedAfter: map[*modelStream]uint64{}}
					// A destroyed stream's unconfirmed writes go with its entry.
					clear(ms.writes)
				}
				m.check(t, l, bufs)
			}
			require.NoError(t, l.Close())
			assert.Empty(t, ev.live, "every guard event destroyed")
		})
	}
}

func (m *model) of(sys hipsys.Stream) *modelStream {
	for _, s := range m.streams {
		if s.sys == sys {
			return s
		}
	}
	panic("no such stream")
}

func (m *model) wrote(ms *modelStream, id memory.ID, at uint64) {
	ms.writes[id] = append(ms.writes[id], at)
}

// confirm drops ms's writes up to point, and the orderings a wait past them covers.
func (m *model) confirm(ms *modelStream, point uint64) {
	for id, ps := range ms.writes {
		ps = slices.DeleteFunc(ps, func(p uint64) bool { return p <= point })
		if len(ps) == 0 {
			delete(ms.writes, id)
		} else {
			ms.writes[id] = ps
		}
	}
	for src, first := range ms.orderedAfter {
		if first <= point {
			// Confirmed past its first ordering; a later one may remain, which the
			// model no longer tracks: the checks below only use orderings the ledger
			// must still know of.
			delete(ms.orderedAfter, src)
		}
	}
}

// fail is what a failed wait of ms for point must take (a write before point no wait
// confirmed) and may take (any buffer with an unconfirmed write); the model forgets
// what must be taken, but for the writes after point of a buffer the ledger still holds
// (held): an entry of its own, queued after the failed point, stays unconfirmed.
func (m *model) fail(ms *modelStream, point uint64, held func(memory.ID) bool) (must, may []memory.ID) {
	for id, ps := range ms.writes {
		may = append(may, id)
		if slices.ContainsFunc(ps, func(p uint64) bool { return p <= point }) {
			must = append(must, id)
		}
	}
	for _, id := range must {
		after := slices.DeleteFunc(ms.writes[id], func(p uint64) bool { return p <= point })
		if len(after) == 0 || !held(id) {
			delete(ms.writes, id)
		} else {
			ms.writes[id] = after
		}
	}
	slices.Sort(must)
	slices.Sort(may)
	return must, may
}

// pending is one binding per buffer with an unconfirmed write on ms.
func (m *model) pending(ms *modelStream) []Binding {
	var out []Binding
	for _, b := range m.bufs {
		if len(ms.writes[b.ID()]) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// check holds the ledger's fast-path answers to the model.
func (m *model) check(t *testing.T, l *Ledger, bufs []Binding) {
	t.Helper()
	for _, ms := range m.streams {
		q := l.Of(ms.sys)
		begun, ended := q.Counts()
		require.Equal(t, uint64(ms.queued), begun)
		require.Equal(t, uint64(ms.queued-ms.inFlight), ended)
		require.Equal(t, ms.shared, q.Shared())
		if q.KnownIdle() {
			require.False(t, ms.shared, "a shared stream is never known idle")
			require.Zero(t, ms.inFlight, "known idle with a call in flight")
			require.Equal(t, ms.certified, ms.queued, "known idle with work queued since the last certifying wait")
		}
		l.mu.Lock()
		for _, w := range q.writes.writes {
			require.LessOrEqual(t, w.first, w.last)
			require.Greater(t, w.first, q.writes.done, "an entry starts after the stream's last confirmed point")
		}
		for src := range ms.orderedAfter {
			_, ok := q.waitedOn[l.Of(src.sys)]
			require.True(t, ok, "an unconfirmed ordering is kept: a failure there may be this stream's")
		}
		l.mu.Unlock()
	}
	for _, b := range bufs {
		pending := false
		for _, ms := range m.streams {
			pending = pending || len(ms.writes[b.ID()]) > 0
		}
		if pending {
			require.True(t, l.Pending(b.ID()), "a write no wait confirmed is pending")
		}
	}
}

// holds reports whether q has an unconfirmed write of id.
func (l *Ledger) holds(q *Stream, id memory.ID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range q.writes.writes {
		if w.b.ID() == id {
			return true
		}
	}
	return false
}
