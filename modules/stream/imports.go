package stream

import (
	"fmt"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
)

// imported is one import: the range the platform was asked to accept and the importer's
// release, called once the memory is no longer used.
type imported struct {
	ptr     hipsys.DevicePtr
	size    uint64
	release func()
	// onCaller: the importer takes the release from ReclaimImports's caller when the
	// memory is already unused (ImportOnCaller), instead of a goroutine's call.
	onCaller bool
}

// importReleases runs the releases of imports whose last reference is gone, each batch
// on a goroutine of its own once the fence after the last work that used them is done.
// A goroutine per batch, never a bounded queue: a release may wait for a lock its
// importer holds while calling into the Device (a Python deleter takes the interpreter's
// lock), so nothing on the Device's side may ever wait for a release to finish, except
// Close.
type importReleases struct{ wg sync.WaitGroup }

// Import makes size bytes at ptr, device memory another library allocated, a buffer of
// the stream's device pools, without copying: the platform checks the range
// (hipsys.MemoryAPI.ImportMemory) and the returned handle works as a reservation's does.
// release is called exactly once, on a goroutine of the stream module's, after the last
// handle and binding of the import are gone (graphs and queued commands hold bindings)
// and the stream's work queued before that is done (ReclaimImports), or at Close. The
// memory is never freed by the stream; it is not counted in the pools' usage.
func (s *Stream) Import(ptr hipsys.DevicePtr, size uint64, release func()) (memory.Handle, error) {
	return s.importRange(&imported{ptr: ptr, size: size, release: release})
}

// ImportOnCaller is Import for an importer whose release may run on the thread that
// drops the import's last reference: when ReclaimImports finds the memory already unused
// (the stream drained), it hands the release to its caller (the onCaller list) instead
// of starting a goroutine for it, and the caller runs it once it holds no lock a release
// could need. What that saves is a thread handoff: a Python release takes the
// interpreter's lock, which the thread dropping the reference already holds. Where the
// stream still has work queued the release is a goroutine's, as Import's.
func (s *Stream) ImportOnCaller(ptr hipsys.DevicePtr, size uint64, release func()) (memory.Handle, error) {
	return s.importRange(&imported{ptr: ptr, size: size, release: release, onCaller: true})
}

func (s *Stream) importRange(im *imported) (memory.Handle, error) {
	ptr, size := im.ptr, im.size
	if err := s.m.p.ImportMemory(ptr, size); err != nil {
		return memory.Handle{}, stepError("import device memory", err)
	}
	h, err := s.GPU.Import(uintptr(ptr), size, im)
	if err != nil {
		_ = s.m.p.ReleaseImportedMemory(ptr, size)
		return memory.Handle{}, err
	}
	return h, nil
}

// ReclaimImports hands the imports of the stream that nothing references any more to
// their releases, after a fence recorded now: the work queued on the stream before it
// may still use the memory. drained, when not nil, is asked (once, and only when there
// is something to release) whether the stream has completed everything queued on it;
// true skips the fence, since no queued work can still use the memory, and the releases
// start at once. The caller answers it without guessing (a wait that saw the stream
// drained with nothing queued since, or the driver's own query): a wrong true releases
// memory under work still reading it. Work of other streams is covered by their pins, which the
// release worker gives back only after that work is done. While the stream records a
// capture nothing is reclaimed (a fence would be recorded into the graph), and the next
// call after the capture does it. The error is only that no fence could be recorded and
// the stream could not be synchronized: the imports are then leaked rather than released
// under work that may still use them.
//
// Releases of ImportOnCaller imports found unused are appended to onCaller (when it is
// not nil) instead: the caller must run each once, without holding any lock a release
// may take (and Close waits for them as for the goroutines').
//
// It returns how many imports it took out of the pools (released now or leaked).
func (s *Stream) ReclaimImports(drained func() bool, onCaller *[]func()) (int, error) {
	if s.GPU.Imports() == 0 || s.Capture.IsRecording() {
		return 0, nil
	}
	r := &s.m.imports
	owners := s.GPU.ReclaimImports(nil)
	if len(owners) == 0 {
		return 0, nil
	}
	batch := make([]*imported, len(owners))
	for i, o := range owners {
		batch[i] = o.(*imported)
	}
	if drained != nil && drained() {
		if onCaller != nil {
			batch = s.m.handOver(batch, onCaller)
		}
		if len(batch) > 0 {
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				s.m.releaseImports(batch)
			}()
		}
		return len(owners), nil
	}
	f, err := NewFence(s.m.p, s.Sys)
	if err != nil {
		if err := s.m.p.StreamSynchronize(s.Sys); err != nil {
			s.m.cfg.log.Warn("stream: imported memory leaked: no fence and no stream sync", "err", err, "imports", len(batch))
			return len(batch), stepError("reclaim imports: synchronize the stream", err)
		}
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := f.Wait(); err != nil {
			// The device faulted with the work still queued: the memory may still be
			// in use, so its owner is not told it is free.
			s.m.cfg.log.Warn("stream: imported memory leaked: the fence after its last use failed", "err", err, "imports", len(batch))
			return
		}
		s.m.releaseImports(batch)
	}()
	return len(batch), nil
}

// handOver appends to onCaller the release of each ImportOnCaller import of batch,
// counted in the imports' wait group until it has run, and returns the rest.
func (m *MultiStream) handOver(batch []*imported, onCaller *[]func()) []*imported {
	rest := batch[:0]
	for _, im := range batch {
		if !im.onCaller {
			rest = append(rest, im)
			continue
		}
		m.imports.wg.Add(1)
		*onCaller = append(*onCaller, func() {
			defer m.imports.wg.Done()
			m.releaseImports([]*imported{im})
		})
	}
	return rest
}

// releaseImports ends the platform's import of each range, then calls its release.
func (m *MultiStream) releaseImports(batch []*imported) {
	for _, im := range batch {
		if err := m.p.ReleaseImportedMemory(im.ptr, im.size); err != nil {
			m.cfg.log.Warn("stream: release of an imported range", "err", err)
		}
		callRelease(m, im)
	}
}

// callRelease calls an import's release, keeping a panic in it from taking the process
// down from a goroutine its importer never saw.
func callRelease(m *MultiStream, im *imported) {
	defer func() {
		if p := recover(); p != nil {
			m.cfg.log.Error("stream: the release of imported memory panicked", "panic", fmt.Sprint(p))
		}
	}()
	if im.release != nil {
		im.release()
	}
}

// closeImports, at Close with every stream synchronized, starts the release of every
// import the stream still holds: nothing can use the memory once the streams are gone.
// It does not wait for them; WaitImports does.
func (m *MultiStream) closeImports(s *Stream) {
	var batch []*imported
	for _, o := range s.GPU.DropImports(nil) {
		batch = append(batch, o.(*imported))
	}
	if len(batch) == 0 {
		return
	}
	m.imports.wg.Add(1)
	go func() {
		defer m.imports.wg.Done()
		m.releaseImports(batch)
	}()
}

// WaitImports waits until every release of imported memory started so far has
// returned. After Close it is how the closer knows every import was given back. The
// caller must hold no lock a release may take: a release is the importer's code.
func (m *MultiStream) WaitImports() { m.imports.wg.Wait() }
