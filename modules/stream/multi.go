package stream

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
)

// DefaultMaxStreams is CubeCL's streaming.max_streams.
const DefaultMaxStreams = 128

// Option configures a MultiStream.
type Option func(*config)

type config struct {
	maxStreams  int
	gpuLayout   memory.Layout
	gpuPolicy   memory.PersistentPolicy
	gpuProps    *memory.DeviceProps
	infoPolicy  InfoPolicy
	dropPolicy  *DropPolicy
	trimPolicy  *TrimPolicy
	log         *slog.Logger
	managerOpts []memory.Option
}

// WithMaxStreams sets how many device streams ids are spread over (default 128). Values
// below 1 are taken as 1: CubeCL's 0 would divide by zero.
func WithMaxStreams(n int) Option { return func(c *config) { c.maxStreams = max(n, 1) } }

// WithGPULayout sets the device pool layout of streams created from now on.
func WithGPULayout(l memory.Layout) Option { return func(c *config) { c.gpuLayout = l } }

// WithPersistentPolicy sets the device managers' persistent-memory policy.
func WithPersistentPolicy(p memory.PersistentPolicy) Option {
	return func(c *config) { c.gpuPolicy = p }
}

// WithGPUProps overrides the device facts the pools are laid out for (default: total
// memory from hipMemGetInfo, alignment max(32, texture, surface alignment)).
func WithGPUProps(p memory.DeviceProps) Option { return func(c *config) { c.gpuProps = &p } }

// WithInfoPolicy sets the info caches' bounds (default DefaultInfoPolicy).
func WithInfoPolicy(p InfoPolicy) Option { return func(c *config) { c.infoPolicy = p } }

// WithDropPolicy sets the drop queues' flush policy (default: DefaultDropPolicy, or
// IntegratedDropPolicy on an integrated GPU).
func WithDropPolicy(p DropPolicy) Option { return func(c *config) { c.dropPolicy = &p } }

// WithLogger sets where warnings go (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithManagerOptions adds options to every memory manager (leak reports, say).
func WithManagerOptions(opts ...memory.Option) Option {
	return func(c *config) { c.managerOpts = append(c.managerOpts, opts...) }
}

// MultiStream maps stream ids onto at most MaxStreams device streams, created lazily, and
// holds what is server-wide: the failure store, the write order across streams and the
// release worker that keeps cross-stream bindings alive.
//
// Concurrency: goroutines may drive distinct streams (distinct slots) concurrently; the
// calls on one stream, and on everything a *Stream holds, must come from one goroutine
// at a time, as the server's single owner does. The failure store, the write marks and
// stream creation are safe for concurrent use.
type MultiStream struct {
	// What every command reads comes first, so that a launch after a driver call has
	// evicted the caches finds it in as few cache lines as possible: its stream, the
	// cross-stream marks' count, the failure store's count (Failures begins with it).
	max      uint64
	slots    []atomic.Pointer[Stream]
	marks    marks
	failures Failures

	p         hipsys.Platform
	cfg       config
	onFailure func(ID, error)
	// onCreate hears of each device stream created, with its slot's id (SetCreateHook);
	// set before use, then read only.
	onCreate func(ID, hipsys.Stream)
	rel      *releaser
	imports  importReleases
	mu       sync.Mutex // stream creation, the layout for later streams
	closed   atomic.Bool
	// created is the created streams' slots in ascending order, replaced whole under mu at
	// each creation and at Close: StreamIDs reads it without scanning every slot.
	created atomic.Pointer[[]ID]
	// lending counts the streams whose closed commands hold borrowings that wait for a
	// fence (Stream.deferred): while it is zero, returning borrowings (borrows.go) has
	// nothing to look at.
	lending atomic.Int32
	trim    trimState // TrimIdle's, its caller's alone
}

// New returns a MultiStream over p with no stream created yet, and starts its release
// worker; Close stops it. It reads the device's memory size and alignment unless
// WithGPUProps gave them.
func New(p hipsys.Platform, opts ...Option) (*MultiStream, error) {
	c := config{maxStreams: DefaultMaxStreams, infoPolicy: DefaultInfoPolicy}
	for _, o := range opts {
		o(&c)
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.gpuProps == nil || c.dropPolicy == nil {
		dev, err := p.GetDevice()
		if err != nil {
			return nil, stepError("current device", err)
		}
		props, err := p.GetDeviceProperties(dev)
		if err != nil {
			return nil, stepError("device properties", err)
		}
		if c.dropPolicy == nil {
			d := DefaultDropPolicy
			if props.Integrated {
				d = IntegratedDropPolicy
			}
			c.dropPolicy = &d
		}
		if c.gpuProps == nil {
			_, total, err := p.MemGetInfo()
			if err != nil {
				return nil, stepError("device memory size", err)
			}
			c.gpuProps = &memory.DeviceProps{
				MemoryTotal: total,
				Alignment:   max(32, props.TextureAlignment, props.SurfaceAlignment),
			}
		}
	}
	m := &MultiStream{p: p, cfg: c, max: uint64(c.maxStreams), slots: make([]atomic.Pointer[Stream], c.maxStreams)}
	m.rel = startReleaser(c.log)
	return m, nil
}

// Platform is the platform the streams live on.
func (m *MultiStream) Platform() hipsys.Platform { return m.p }

// SetFailureHook sets the function the failure path calls after tainting (the server's
// on_failure: invalidate every open profiling window). Set it before the MultiStream is
// used; it is called on the goroutine that hit the failure.
func (m *MultiStream) SetFailureHook(h func(stream ID, err error)) { m.onFailure = h }

// SetCreateHook sets the function told of each device stream the MultiStream creates,
// with the id StreamIDs gives for it, before any command runs on it: a layer that keeps
// state per device stream (the server's inferences about it) learns the id to report
// that stream's failures under without searching the ids. Set it before the MultiStream
// is used; it is called under the MultiStream's lock, so it must not call back into it.
func (m *MultiStream) SetCreateHook(h func(id ID, sys hipsys.Stream)) { m.onCreate = h }

// SetReleaseHook sets h to run on the release worker each time it has released the
// bindings a stream borrowed, once their work was done: a binding released there may have
// been an imported buffer's last use, whose release the owner starts (ReclaimImports)
// under its own lock, which the worker must not take. h must not block. nil removes it.
func (m *MultiStream) SetReleaseHook(h func()) {
	if h == nil {
		m.rel.after.Store(nil)
		return
	}
	m.rel.after.Store(&h)
}

// SetGPULayout sets the device pool layout of streams created from now on; streams that
// exist keep theirs (memory is per stream).
func (m *MultiStream) SetGPULayout(l memory.Layout) {
	m.mu.Lock()
	m.cfg.gpuLayout = l
	m.mu.Unlock()
}

// GPULayout is the layout streams created from now on get, and the device facts.
func (m *MultiStream) GPULayout() (memory.Layout, memory.DeviceProps) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg.gpuLayout, *m.cfg.gpuProps
}

func (m *MultiStream) slotOf(id ID) int { return int(uint64(id) % m.max) }

// DeviceStream is the index of the device stream id runs on, from 0 to the MultiStream's
// max streams: ids with the same index share one device stream, its order and its
// failures. It creates nothing.
func (m *MultiStream) DeviceStream(id ID) int { return m.slotOf(id) }

// TryStream returns id's stream if it was created, nil otherwise; it creates nothing.
func (m *MultiStream) TryStream(id ID) *Stream { return m.slots[m.slotOf(id)].Load() }

// Stream returns id's stream, creating it (a non-blocking device stream with its memory
// managers, drop queue, capture state and info cache) on first use. Creation failure is
// returned, and a later call tries again.
func (m *MultiStream) Stream(id ID) (*Stream, error) {
	slot := m.slotOf(id)
	if s := m.slots[slot].Load(); s != nil {
		return s, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.slots[slot].Load(); s != nil {
		return s, nil
	}
	if m.closed.Load() {
		return nil, ErrClosed
	}
	s, err := m.newStream(slot)
	if err != nil {
		return nil, err
	}
	m.slots[slot].Store(s)
	if h := m.onCreate; h != nil {
		h(ID(slot), s.Sys)
	}
	ids := m.AppendStreamIDs(nil)
	i, _ := slices.BinarySearch(ids, ID(slot))
	ids = slices.Insert(ids, i, ID(slot))
	m.created.Store(&ids)
	return s, nil
}

func (m *MultiStream) newStream(slot int) (*Stream, error) {
	sys, err := m.p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	if err != nil {
		return nil, stepError("create stream", err)
	}
	gpuStorage := NewDeviceStorage(m.p, m.cfg.log)
	gpuOpts := append([]memory.Option{
		memory.WithLayout(m.cfg.gpuLayout), memory.WithPersistentPolicy(m.cfg.gpuPolicy), memory.WithLogger(m.cfg.log),
	}, m.cfg.managerOpts...)
	gpu, err := memory.New(gpuStorage, *m.cfg.gpuProps, gpuOpts...)
	if err == nil {
		// The pinned pools keep the default layout and policy whatever the device's:
		// staging sizes follow the copies, and the pinned mode is never changed.
		pinnedProps := memory.DeviceProps{MemoryTotal: m.cfg.gpuProps.MemoryTotal, Alignment: PinnedAlignment}
		var pinned *memory.Manager
		pinnedOpts := append([]memory.Option{memory.WithLogger(m.cfg.log)}, m.cfg.managerOpts...)
		pinnedStorage := NewPinnedStorage(m.p, sys, m.cfg.log)
		pinned, err = memory.New(pinnedStorage, pinnedProps, pinnedOpts...)
		if err == nil {
			s := &Stream{
				m: m, slot: slot, Sys: sys,
				GPU: gpu, GPUStorage: gpuStorage, Pinned: pinned, pinnedStorage: pinnedStorage,
				Drops:      NewDropQueue(*m.cfg.dropPolicy, m.cfg.log),
				Info:       NewInfoCache(m.cfg.infoPolicy),
				lastSynced: make([]uint64, m.max),
			}
			gpuStorage.capture, pinnedStorage.capture = &s.Capture, &s.Capture
			return s, nil
		}
	}
	_ = m.p.StreamDestroy(sys)
	return nil, fmt.Errorf("stream: memory managers: %w", err)
}

// StreamIDs returns one id per created stream, the slot index: feeding it back maps to
// the same stream.
func (m *MultiStream) StreamIDs() []ID { return m.AppendStreamIDs(nil) }

// AppendStreamIDs appends StreamIDs' ids to ids and returns the result: a caller on a
// hot path (an export to another library walks every stream) reuses one slice.
func (m *MultiStream) AppendStreamIDs(ids []ID) []ID {
	if c := m.created.Load(); c != nil {
		ids = append(ids, *c...)
	}
	return ids
}

// Close ends the MultiStream and gives back everything its streams took: it waits for
// each stream, releases what the drop queues held, stops the release worker once it has
// released every binding handed to it, frees every device and pinned allocation of the
// pools (handles still held become unusable: their lookups fail with memory.ErrNotFound)
// and destroys the streams. New streams are refused afterwards. A failed wait or
// destroy is returned; what remains is freed regardless, since nothing will run on it.
//
// Differs from CubeCL, whose streams and pools live as long as the process: a program
// that opens and closes devices must not leak a stream and its memory each time.
func (m *MultiStream) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for i := range m.slots {
		if s := m.slots[i].Load(); s != nil {
			serr := m.p.StreamSynchronize(s.Sys)
			errs = append(errs, serr)
			if d := s.deferred; d != nil {
				if len(d.pins) > 0 {
					m.lending.Add(-1)
				}
				if serr == nil {
					// Every command's work is done: what waited for a fence is free to go.
					for i := range d.pins {
						_ = d.pins[i].Release()
					}
				}
				s.deferred = nil
			}
			// The queue's fences are on a finished stream: this returns at once.
			errs = append(errs, s.Drops.Flush(m.p, s.Sys), s.Drops.Flush(m.p, s.Sys))
		}
	}
	m.rel.close()
	for i := range m.slots {
		s := m.slots[i].Load()
		if s == nil {
			continue
		}
		m.closeImports(s)
		s.GPUStorage.FreeAll()
		s.pinnedStorage.FreeAll()
		errs = append(errs, m.p.StreamDestroy(s.Sys))
		m.slots[i].Store(nil)
	}
	m.created.Store(nil)
	return errors.Join(errs...)
}
