package server_test

// The model's view of cross-stream order (the oracle's rule 9): which device streams
// may have been ordered after which, and from when, so that a device fault found by a
// wait the model cannot see (one inside another call) is allowed to fail exactly what
// the server blames for it (compute/internal/ledger/confirm.go, takeOrderedLocked), and no more.
//
// Times are the model's: op number T orders at 2T (the op's cross-stream waits come
// before its work) and writes and confirms at 2T+1.

// modelSpan is the times of a device stream's possible orderings after another since
// its last successful Sync: the first and the latest.
type modelSpan struct{ first, last int }

// modelOrder is, per device stream, the other device streams it may be ordered after.
type modelOrder struct {
	after    []map[int]modelSpan // after[d][src]
	syncedAt []int               // the time of device stream d's last successful Sync
}

func (m *model) writeTime() int { return 2*m.tick + 1 }

func (m *model) orderState() *modelOrder {
	o := &m.order
	if o.after == nil {
		o.after, o.syncedAt = make([]map[int]modelSpan, m.o.MaxStreams), make([]int, m.o.MaxStreams)
	}
	return o
}

// ordered records the orderings op (on device stream d) may make: a command waits on the
// device for the last write of every buffer it is given that was written on another
// device stream, and for the work of the stream whose pools hold it. The model does not
// follow the server's cursors and marks, so it takes every stream that ever wrote the
// buffer, and its home: more orderings than the server makes, which only lets the
// model accept more errors, never more bytes.
func (m *model) ordered(op modelOp, d int) {
	var bufs []*mbuf
	switch op.Kind {
	case "write", "writeAt", "read", "readAt", "readSlice":
		bufs = append(bufs, m.live(op.B))
	case "launch", "capture":
		bufs = append(bufs, m.live(op.B))
		if op.K == kAddC {
			bufs = append(bufs, m.live(op.X))
		}
	case "replay":
		if op.G < len(m.graphs) && !m.graphs[op.G].destroyed {
			g := m.graphs[op.G]
			d = m.dev(g.s)
			bufs = append(bufs, g.y)
			if g.kind == kAddC {
				bufs = append(bufs, g.x)
			}
		}
	}
	for _, b := range bufs {
		m.orderedBy(b, d)
	}
}

// orderedBy records the orderings a command on device stream d given b may make. (An
// outside op's read calls it itself: it runs after the op's Sync, which would forget
// an ordering recorded before it.)
func (m *model) orderedBy(b *mbuf, d int) {
	if b == nil {
		return
	}
	m.orderAfter(d, b.home)
	for src := range b.wroteOn {
		m.orderAfter(d, src)
	}
}

func (m *model) orderAfter(d, src int) {
	if d == src {
		return
	}
	o := m.orderState()
	if o.after[d] == nil {
		o.after[d] = map[int]modelSpan{}
	}
	at := 2 * m.tick
	sp, ok := o.after[d][src]
	if !ok {
		sp.first = at
	}
	sp.last = at
	o.after[d][src] = sp
}

// synced records a successful Sync of device stream d: its orderings are confirmed.
func (m *model) synced(d int) {
	o := m.orderState()
	o.after[d] = nil
	o.syncedAt[d] = m.writeTime()
}

// failFaulted applies rule 9 for every device stream with a fault pending.
func (m *model) failFaulted() {
	for f, n := range m.faults {
		if n > 0 {
			m.failOrdered(f)
		}
	}
}

// failOrdered leaves carrying a failure of device stream f: f's unconfirmed writes, and
// the unconfirmed writes of every stream ordered after f's unconfirmed work (directly or
// through others) made after that ordering. As the server blames them: a stream is
// suspect from a time on (f from its last Sync), and one ordered after a suspect stream
// later than that time is suspect from the first such ordering (no earlier than that
// time). A write made before its stream became suspect is not failed by it: the model
// then checks that it reads as written.
func (m *model) failOrdered(f int) {
	o := m.orderState()
	from := map[int]int{f: o.syncedAt[f]}
	for grew := true; grew; {
		grew = false
		for d, srcs := range o.after {
			if d == f {
				continue
			}
			for src, sp := range srcs {
				at, suspect := from[src]
				if !suspect || sp.last <= at {
					continue
				}
				after := max(sp.first, at)
				if cur, ok := from[d]; !ok || after < cur {
					from[d], grew = after, true
				}
			}
		}
	}
	for d := range from {
		m.unsynced[d] = true // a stream the fault reaches may have its work failed
	}
	for _, b := range m.bufs {
		for d, t := range b.pending {
			if at, suspect := from[d]; suspect && (d == f || t > at) {
				b.errOK = true
			}
		}
	}
}
