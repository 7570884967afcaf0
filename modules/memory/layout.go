package memory

import (
	"fmt"
	"math"
)

// PoolSpec configures one dynamic pool: a [SlicedSpec], an [ExclusiveSpec]
// or a [DirectSpec]. A zero optional field means "none".
//
// Differs from CubeCL: its optional fields are Options, so an explicit zero
// slice size or cap is an error there; here zero is the absent value.
type PoolSpec interface {
	isPoolSpec()
	String() string
}

// SlicedSpec is a pool of PageSize pages carved into slices of at most
// MaxSliceSize (default: the page), holding at most MaxPoolSize bytes of
// pages (default: uncapped). An uncapped pool's first pages are smaller: it
// starts with 2 MiB (or the first slice) and each page it adds is as large as
// the ones it holds, up to PageSize. DeallocPeriod is accepted for CubeCL
// parity and ignored: sliced pages are only given back by an explicit cleanup.
type SlicedSpec struct {
	PageSize, MaxSliceSize, MaxPoolSize, DeallocPeriod uint64
}

// ExclusiveSpec is a pool of one allocation per page, up to MaxAllocSize
// bytes each (0 serves zero-size allocations only). Free pages are aged
// every DeallocPeriod/5 reservations (default: only on explicit cleanup).
type ExclusiveSpec struct {
	MaxAllocSize, DeallocPeriod uint64
}

// DirectSpec is a pool that allocates every reservation on its own and
// reuses by exact size, reclaiming free allocations once the pool would
// reserve more than ReclaimAt bytes (default: never).
type DirectSpec struct {
	ReclaimAt uint64
	// Exact allocates each reservation at its own size, not rounded up to the device's
	// alignment, so that the storage sees each buffer's exact extent: a device checking
	// kernels' accesses places its redzone right after a buffer's last byte.
	Exact bool
}

func (SlicedSpec) isPoolSpec()    {}
func (ExclusiveSpec) isPoolSpec() {}
func (DirectSpec) isPoolSpec()    {}

func (s SlicedSpec) String() string {
	return fmt.Sprintf("sliced(page %s, slice %s, cap %s)", bytes(s.PageSize), bytes(s.MaxSliceSize), bytes(s.MaxPoolSize))
}

func (s ExclusiveSpec) String() string {
	return fmt.Sprintf("exclusive(max %s, period %d)", bytes(s.MaxAllocSize), s.DeallocPeriod)
}

func (s DirectSpec) String() string {
	if s.Exact {
		return fmt.Sprintf("direct(reclaim at %s, exact)", bytes(s.ReclaimAt))
	}
	return fmt.Sprintf("direct(reclaim at %s)", bytes(s.ReclaimAt))
}

// bytes formats a size with a binary unit where it divides evenly.
func bytes(n uint64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// DeviceProps are the device facts layouts are computed from.
type DeviceProps struct {
	// MemoryTotal is the device's memory (hipMemGetInfo's total).
	MemoryTotal uint64
	// Alignment of every slice: max(32, textureAlignment,
	// surfaceAlignment) on a GPU, 16 for pinned host memory.
	Alignment uint64
}

// MaxPageSize is a quarter of the device memory: the largest page any
// preset creates, and the persistent pool's largest allocation.
func (p DeviceProps) MaxPageSize() uint64 { return p.MemoryTotal / 4 }

func (p DeviceProps) validate() error {
	if p.Alignment == 0 {
		return &LayoutError{Pool: -1, Reason: "device alignment is 0"}
	}
	return nil
}

// Layout chooses the dynamic pools: Pools when non-empty, else Preset.
// The zero Layout is the SubSlices preset.
type Layout struct {
	Preset Preset
	Pools  []PoolSpec
}

// Explicit returns a layout of exactly these pools, in routing order.
func Explicit(pools ...PoolSpec) Layout { return Layout{Pools: pools} }

// maxDynamicPools keeps index 255 free for the persistent pool.
const maxDynamicPools = 254

// Resolve validates the layout and returns the pools it makes on a device:
// sizes rounded up to the alignment, defaults filled in. It fails with a
// [LayoutError] and never panics.
func (l Layout) Resolve(props DeviceProps) ([]PoolSpec, error) {
	if err := props.validate(); err != nil {
		return nil, err
	}
	if l.Pools == nil {
		return l.Preset.Pools(props)
	}
	if len(l.Pools) == 0 {
		return nil, &LayoutError{Pool: -1, Reason: "no pools"}
	}
	if len(l.Pools) > maxDynamicPools {
		return nil, &LayoutError{Pool: -1, Reason: fmt.Sprintf("%d pools, at most %d", len(l.Pools), maxDynamicPools)}
	}
	out := make([]PoolSpec, len(l.Pools))
	for i, spec := range l.Pools {
		r, reason := resolveSpec(spec, props.Alignment)
		if reason != "" {
			return nil, &LayoutError{Pool: i, Reason: reason}
		}
		out[i] = r
	}
	return out, nil
}

func resolveSpec(spec PoolSpec, align uint64) (PoolSpec, string) {
	switch s := spec.(type) {
	case SlicedSpec:
		return resolveSliced(s, align)
	case ExclusiveSpec:
		m, ok := roundUp(s.MaxAllocSize, align)
		if !ok {
			return nil, "max alloc size overflows when aligned"
		}
		s.MaxAllocSize = m
		return s, ""
	case DirectSpec:
		return s, ""
	case nil:
		return nil, "nil pool"
	}
	return nil, fmt.Sprintf("unknown pool kind %T", spec)
}

func resolveSliced(s SlicedSpec, align uint64) (PoolSpec, string) {
	if s.PageSize == 0 {
		return nil, "page size is 0"
	}
	var ok [3]bool
	s.PageSize, ok[0] = roundUp(s.PageSize, align)
	s.MaxSliceSize, ok[1] = roundUp(s.MaxSliceSize, align)
	s.MaxPoolSize, ok[2] = roundUp(s.MaxPoolSize, align)
	if !ok[0] || !ok[1] || !ok[2] {
		return nil, "size overflows when aligned"
	}
	if s.MaxSliceSize == 0 {
		s.MaxSliceSize = s.PageSize
	}
	if s.MaxSliceSize > s.PageSize {
		return nil, fmt.Sprintf("max slice %d exceeds page %d", s.MaxSliceSize, s.PageSize)
	}
	if s.MaxPoolSize != 0 {
		if s.MaxPoolSize < s.PageSize {
			return nil, fmt.Sprintf("cap %d is below one page of %d", s.MaxPoolSize, s.PageSize)
		}
		if s.MaxPoolSize/s.PageSize > maxSlicedPages {
			return nil, fmt.Sprintf("cap %d holds more than %d pages", s.MaxPoolSize, maxSlicedPages)
		}
	}
	return s, ""
}

// roundUp aligns n upward; ok is false on overflow.
func roundUp(n, align uint64) (uint64, bool) {
	if n%align == 0 {
		return n, true
	}
	r := n + (align - n%align)
	return r, r > n
}

// deallocPeriod is CubeCL's 5000 reservations per started GiB of the
// pool's largest allocation (rounded to nearest).
func deallocPeriod(size uint64) uint64 {
	return 5000 * uint64(math.Round(1+float64(size)/float64(1<<30)))
}
