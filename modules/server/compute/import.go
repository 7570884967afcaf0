package compute

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Import makes size bytes at ptr, device memory another library allocated (CuPy's,
// PyTorch's; on the cpu platform any host memory), a buffer homed on stream id without
// copying it: the platform checks that the range is memory of this device first. The
// handle works everywhere an allocation's does. The server never frees the memory and
// never gives it to another allocation: release is called exactly once, from a
// goroutine of its own, when the last handle and binding are gone (a graph that
// recorded work on it, and queued commands, hold bindings) and the stream's work queued
// until then is done; or at Close. On failure release is not called.
//
// onCaller asks for the release to be handed to the caller of the call that drops the
// last reference (see CallerReleases) when the memory is unused by then, instead of
// running on a goroutine of the server's.
func (s *Server) Import(ptr hipsys.DevicePtr, size uint64, release func(), id StreamID, onCaller bool) (Handle, error) {
	s.settleQueue()
	s.reclaimImports()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return Handle{}, err
	}
	defer r.Close()
	// The stream is not shared by an import: a producer can queue work on it only
	// through its native handle, and handing that out (NativeStream) shares it. Producers
	// that order their work elsewhere are waited for with WaitForeign (foreign.go).
	imp := r.Stream().Import
	if onCaller {
		imp = r.Stream().ImportOnCaller
	}
	h, err := imp(ptr, size, release)
	if err != nil {
		return Handle{}, fmt.Errorf("server: import of %d bytes at %#x: %w", size, uint64(ptr), err)
	}
	s.imports.Add(1)
	return Handle{Handle: h, Stream: id}, nil
}

// reclaimImports hands the imports nothing references any more to their releases (see
// stream.Stream.ReclaimImports). The calls that drop references (Free, GraphDestroy) run
// it, and so do Flush, MemoryCleanup and Import, and the owner's ReclaimImports when a
// release worker gave references back (OnBorrowsReturned). With no import held it costs one comparison: Free is on the
// allocation path's budget.
func (s *Server) reclaimImports() { s.reclaim(nil) }

// ReclaimImports starts the releases of imports nothing references any more: what
// Flush does for them, alone. The owner calls it when OnBorrowsReturned says a release
// worker gave references back.
func (s *Server) ReclaimImports() { s.reclaimImports() }

// OnBorrowsReturned sets f to run, on a release worker's goroutine, each time the worker
// has given back references that a stream's work borrowed, once that work was done: one
// may have been an imported buffer's last use, whose release would otherwise wait for
// the owner's next Release, Flush, MemoryCleanup or Import. f must not block and must
// not call the server; it tells the owner to call ReclaimImports.
func (s *Server) OnBorrowsReturned(f func()) {
	if f == nil {
		s.streams.SetReleaseHook(nil)
		return
	}
	// Most servers hold no import: their release workers then call nothing.
	s.streams.SetReleaseHook(func() {
		if s.imports.Load() > 0 {
			f()
		}
	})
}

// reclaim is reclaimImports; onCaller, when not nil, takes the releases of imports made
// with onCaller that are found unused (stream.Stream.ReclaimImports).
func (s *Server) reclaim(onCaller *[]func()) {
	if s.imports.Load() == 0 {
		return
	}
	for _, id := range s.streams.StreamIDs() {
		st := s.streams.TryStream(id)
		if st == nil {
			continue
		}
		n, err := st.ReclaimImports(func() bool {
			// The direct read's test (read.go): known idle, else the driver's query.
			return s.watch.knownIdle(st.Sys) || s.p.StreamQuery(st.Sys) == nil
		}, onCaller)
		s.imports.Add(-int64(n))
		if err != nil {
			s.log.Warn("server: reclaim imported memory", "stream", id, "err", err)
		}
	}
}

// NativeStream is the platform's handle of stream id's device stream (a CUstream on
// nvidia, a hipStream_t on amd), created if needed: what another library orders its work
// against before this server uses memory it handed over (DLPack's stream argument).
//
// Once its handle is out, the stream is shared: anything may queue on it without the
// server seeing it, so the server stops inferring that it is idle or that a flag covers
// its work, and every wait on it is the driver's own (internal/ledger).
func (s *Server) NativeStream(id StreamID) (hipsys.Stream, error) {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	s.ledger.Of(r.Stream().Sys).Share()
	return r.Stream().Sys, nil
}
