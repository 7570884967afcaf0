package memory

import (
	"log/slog"
)

// Manager is one stream's memory manager: CubeCL's MemoryManagement. It
// routes reservations through its dynamic pools and its persistent pool,
// binds them to handles, resolves bindings to storage resources and gives
// memory back on cleanup.
//
// A Manager is not safe for concurrent use: like the seed's server, it
// belongs to one goroutine (the stream's actor). The handles and bindings
// it hands out may be cloned and released from any goroutine.
//
// [New] builds a manager over a storage for a device ([DeviceProps]: memory
// size and alignment) with a [Layout]: a [Preset] computed from the device
// (SubSlices by default, or ExclusivePages) or an explicit list of
// [SlicedSpec], [ExclusiveSpec] and [DirectSpec] pools, validated by
// [Layout.Resolve]. Then:
//
//   - [Manager.Reserve] returns an owning [Handle] to a fresh slice. It can
//     be used as it is, or given to a handle made earlier with
//     [Manager.NewHandle] through [Manager.Bind] (reserve-then-bind).
//   - [Handle.Binding] makes a [Binding], what kernels and copies receive;
//     [Manager.Resource] resolves it to a [Resource] (base address, offset,
//     size) with its offsets applied.
//   - [Handle.Release] and [Binding.Release] give references back. A slice
//     whose last user reference is gone is free for the next reservation.
//   - [Manager.Cleanup] gives free pages back to the storage.
//   - [Manager.Import] makes memory the manager did not allocate a handle
//     family of its own, and [Manager.ReclaimImports] hands back the owners
//     of the imports nothing references any more: the caller frees nothing
//     it did not allocate, and decides when the memory is truly unused.
//
// Routing, pools, modes and capture follow the digest of CubeCL (§4); the
// doc comment of each names what it keeps and the "Differs from CubeCL"
// comments mark every departure.
type Manager struct {
	storage    Storage
	props      DeviceProps
	layout     []PoolSpec
	pools      []pool
	persistent *persistentPool
	imported   *importedPool
	rec        recycler

	policy  PersistentPolicy
	mode    Mode
	depth   int // nesting of persistent windows
	capture *captureState

	reserveCount uint64
	dryRun       bool
	queued       bool   // frees queued on the storage since the last flush
	due          uint64 // reservation count of the next periodic cleanup
	warned       []bool // capacity warning given, per pool of the layout

	log  *slog.Logger
	leak func(Leak)
}

// Option configures a Manager.
type Option func(*config)

type config struct {
	layout Layout
	policy PersistentPolicy
	log    *slog.Logger
	leak   func(Leak)
}

// WithLayout sets the dynamic pools (default: the SubSlices preset).
func WithLayout(l Layout) Option { return func(c *config) { c.layout = l } }

// WithPersistentPolicy sets the persistent-memory policy (default
// PersistentEnabled). A pinned host manager should keep the default: its
// mode is never changed and it starts in ModeAuto.
func WithPersistentPolicy(p PersistentPolicy) Option { return func(c *config) { c.policy = p } }

// WithLogger sets where capacity warnings go (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithLeakReport makes the garbage collector report every handle and
// binding from this manager that becomes unreachable unreleased, to report
// (nil: a slog warning). It costs an allocation per reference, so the
// hot path is allocation-free only without it.
func WithLeakReport(report func(Leak)) Option {
	return func(c *config) {
		if report == nil {
			report = slogLeak
		}
		c.leak = report
	}
}

// New returns a manager over storage for a device. It fails with a
// [LayoutError] if the layout does not resolve; it allocates no storage.
func New(storage Storage, props DeviceProps, opts ...Option) (*Manager, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	specs, err := c.layout.Resolve(props)
	if err != nil {
		return nil, err
	}
	if c.policy > PersistentEnforced {
		return nil, &LayoutError{Pool: -1, Reason: "unknown persistent policy " + c.policy.String()}
	}
	m := &Manager{storage: storage, props: props, policy: c.policy, log: c.log, leak: c.leak}
	if c.policy == PersistentEnforced {
		m.mode = ModePersistent
	}
	m.persistent = newPersistentPool(m.pageBase(PersistentPool))
	m.imported = newImportedPool(m.pageBase(ImportedPool))
	m.build(specs)
	return m, nil
}

// pageBase is the shared bookkeeping a new pool starts from.
func (m *Manager) pageBase(index uint8) pages {
	return pages{index: index, align: m.props.Alignment, rec: &m.rec, storage: m.storage, queued: &m.queued}
}

// build replaces the dynamic pools; the old ones must hold nothing.
func (m *Manager) build(specs []PoolSpec) {
	m.layout = specs
	m.pools = make([]pool, len(specs))
	for i, s := range specs {
		m.pools[i] = newPool(s, m.pageBase(uint8(i)))
	}
	m.warned = make([]bool, len(specs))
	m.schedule()
}

// schedule finds when the next periodic cleanup has work to do.
func (m *Manager) schedule() {
	m.due = never
	for _, p := range m.pools {
		m.due = min(m.due, p.due())
	}
}

// Layout returns the resolved dynamic pools, in routing order.
func (m *Manager) Layout() []PoolSpec { return append([]PoolSpec(nil), m.layout...) }

// Props returns the device properties the manager was built for.
func (m *Manager) Props() DeviceProps { return m.props }

// SetDryRun makes later reservations lazy (true) or eager (false). A lazy
// reservation that needs a new page records the page without allocating
// it, so a dry run measures the working set without touching the device;
// [Manager.Resource] maps the page on first use.
func (m *Manager) SetDryRun(on bool) { m.dryRun = on }

// NewHandle returns a fresh, unbound handle of size bytes: the client side
// of the reserve-then-bind protocol. Lookups of it fail with NeverBound
// until [Manager.Bind] gives it a slice.
func (m *Manager) NewHandle(size uint64) Handle {
	d := m.rec.get(oneHandle)
	id := ID(d.id.Load())
	return Handle{d: d, id: id, size: size, tok: newToken(m.leak, id, size, "handle")}
}
