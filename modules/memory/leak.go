package memory

import (
	"log/slog"
	"runtime"
)

// Leak describes a handle or binding that became unreachable without being
// released. Its slice stays busy: the report is the only consequence.
type Leak struct {
	ID   ID
	Size uint64
	Kind string // "handle" or "binding"
}

// token is the per-reference object the garbage collector watches when leak
// reports are on. It must not be reachable from the pools, or it would never
// become unreachable; the descriptor, which the pools hold, carries none.
type token struct {
	cleanup runtime.Cleanup
	report  func(Leak)
	_       byte // a zero-size object shares one address and is never collected
}

type leakArg struct {
	report func(Leak)
	leak   Leak
}

func reportLeak(a leakArg) { a.report(a.leak) }

// newToken arms a report for one reference; a nil report disables tracking,
// which keeps the hot path free of allocations.
func newToken(report func(Leak), id ID, size uint64, kind string) *token {
	if report == nil {
		return nil
	}
	t := &token{report: report}
	t.cleanup = runtime.AddCleanup(t, reportLeak, leakArg{report, Leak{ID: id, Size: size, Kind: kind}})
	return t
}

// again arms a token for a new reference derived from t's.
func (t *token) again(id ID, size uint64, kind string) *token {
	if t == nil {
		return nil
	}
	return newToken(t.report, id, size, kind)
}

// stop disarms the report once the reference is released.
func (t *token) stop() {
	if t != nil {
		t.cleanup.Stop()
	}
}

// slogLeak is the report used when [WithLeakReport] gets a nil function.
func slogLeak(l Leak) {
	slog.Warn("memory: leaked reference; its slice stays busy until the manager is dropped",
		"kind", l.Kind, "id", uint64(l.ID), "size", l.Size)
}
