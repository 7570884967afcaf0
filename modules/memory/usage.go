package memory

import "fmt"

// Usage counts a manager's memory. BytesInUse sums the requested sizes of
// live allocations, BytesPadding their alignment padding, and
// BytesReserved the storage the pools hold (pages, lazy ones included).
type Usage struct {
	NumberAllocs  uint64
	BytesInUse    uint64
	BytesPadding  uint64
	BytesReserved uint64
}

func (u Usage) add(v Usage) Usage {
	return Usage{
		NumberAllocs:  u.NumberAllocs + v.NumberAllocs,
		BytesInUse:    u.BytesInUse + v.BytesInUse,
		BytesPadding:  u.BytesPadding + v.BytesPadding,
		BytesReserved: u.BytesReserved + v.BytesReserved,
	}
}

func (u Usage) String() string {
	return fmt.Sprintf("%d allocs, %d in use, %d padding, %d reserved",
		u.NumberAllocs, u.BytesInUse, u.BytesPadding, u.BytesReserved)
}

// PoolReport describes one pool: its resolved spec, usage, live and peak
// page counts, lazy pages not yet mapped, and the largest allocation it
// ever served. Spec is nil for the persistent pool.
type PoolReport struct {
	Spec          PoolSpec
	Usage         Usage
	Pages         int
	PagesPeak     int
	PagesUnmapped int
	LargestAlloc  uint64
}

// Report is the read side of dry-run planning: measure a run lazily, then
// cap the pools from what the report shows.
type Report struct {
	Dynamic    []PoolReport // routing order
	Persistent PoolReport
}

// Usage sums the dynamic pools and the persistent pool.
func (m *Manager) Usage() Usage {
	u := m.persistent.usage()
	for _, p := range m.pools {
		u = u.add(p.pageSet().usage())
	}
	return u
}

// Report describes every pool. Installing a layout resets the peaks.
func (m *Manager) Report() Report {
	r := Report{Dynamic: make([]PoolReport, len(m.pools)), Persistent: m.persistent.report(nil)}
	for i, p := range m.pools {
		r.Dynamic[i] = p.pageSet().report(p.spec())
	}
	return r
}
