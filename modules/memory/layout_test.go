package memory_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

// summary renders sliced pools as "page/slice" and the tail as
// "max/period", in the units of the digest's §4.4 table.
func summary(pools []memory.PoolSpec) (sliced []string, tail string) {
	for _, p := range pools {
		switch s := p.(type) {
		case memory.SlicedSpec:
			sliced = append(sliced, short(s.PageSize)+"/"+short(s.MaxSliceSize))
		case memory.ExclusiveSpec:
			if s.MaxAllocSize != 0 {
				tail = fmt.Sprintf("%s/%d", short(s.MaxAllocSize), s.DeallocPeriod)
			}
		}
	}
	return sliced, tail
}

func short(n uint64) string {
	for _, u := range []struct {
		v    uint64
		name string
	}{{gib, "G"}, {mib, "M"}, {kib, "K"}} {
		if n >= u.v {
			s := fmt.Sprintf("%.2f", float64(n)/float64(u.v))
			return strings.TrimSuffix(strings.TrimRight(s, "0"), ".") + u.name
		}
	}
	return fmt.Sprint(n)
}

func TestSubSlicesTable(t *testing.T) {
	// The digest's §4.4 worked numbers, alignment 256.
	tests := []struct {
		memory uint64
		sliced string
		tail   string
	}{
		{8 * gib, "8M/512K 32M/4M 128M/32M 512M/256M", "2G/15000"},
		{16 * gib, "16M/1M 64M/8M 256M/64M 1G/512M", "4G/25000"},
		{24 * gib, "24M/1.5M 96M/12M 384M/96M 1.5G/768M", "6G/35000"},
		{64 * gib, "16M/512K 64M/4M 256M/32M 1G/256M 4G/2G", "16G/85000"},
		{192 * gib, "12M/192K 48M/1.5M 192M/12M 768M/96M 3G/768M 12G/6G", "48G/245000"},
	}
	for _, tt := range tests {
		t.Run(short(tt.memory), func(t *testing.T) {
			pools, err := memory.SubSlices.Pools(memory.DeviceProps{MemoryTotal: tt.memory, Alignment: 256})
			require.NoError(t, err)
			assert.Equal(t, memory.ExclusiveSpec{}, pools[0], "zero-size pool first")
			sliced, tail := summary(pools)
			assert.Equal(t, tt.sliced, strings.Join(sliced, " "))
			assert.Equal(t, tt.tail, tail)
		})
	}
}

func TestPinnedLayoutAlignment16(t *testing.T) {
	pools, err := memory.SubSlices.Pools(memory.DeviceProps{MemoryTotal: 8 * gib, Alignment: 16})
	require.NoError(t, err)
	sliced, tail := summary(pools)
	assert.Equal(t, "8M/512K 32M/4M 128M/32M 512M/256M", strings.Join(sliced, " "))
	assert.Equal(t, "2G/15000", tail)
}

func TestExclusivePagesPreset(t *testing.T) {
	props := memory.DeviceProps{MemoryTotal: 8 * gib, Alignment: 256}
	pools, err := memory.ExclusivePages.Pools(props)
	require.NoError(t, err)
	require.Len(t, pools, 24)
	first, last := pools[0].(memory.ExclusiveSpec), pools[23].(memory.ExclusiveSpec)
	assert.Equal(t, memory.ExclusiveSpec{MaxAllocSize: 32 * kib, DeallocPeriod: 5000}, first)
	assert.Equal(t, memory.ExclusiveSpec{MaxAllocSize: 2 * gib, DeallocPeriod: 15000}, last)
	prev := uint64(0)
	for _, p := range pools {
		s := p.(memory.ExclusiveSpec)
		assert.Greater(t, s.MaxAllocSize, prev, "increasing, deduplicated")
		assert.Zero(t, s.MaxAllocSize%256)
		prev = s.MaxAllocSize
	}
	// A small device dedupes equal neighbours.
	tiny, err := memory.ExclusivePages.Pools(memory.DeviceProps{MemoryTotal: 256 * kib, Alignment: 32 * kib})
	require.NoError(t, err)
	assert.Len(t, tiny, 2)
}

func TestExplicitLayoutValidation(t *testing.T) {
	const align = 256
	many := make([]memory.PoolSpec, 255)
	for i := range many {
		many[i] = memory.DirectSpec{}
	}
	tests := []struct {
		name  string
		pools []memory.PoolSpec
		pool  int // offending index; -1 the layout
	}{
		{"empty", []memory.PoolSpec{}, -1},
		{"255 pools", many, -1},
		{"zero page", []memory.PoolSpec{memory.SlicedSpec{}}, 0},
		{"slice over page", []memory.PoolSpec{memory.DirectSpec{}, memory.SlicedSpec{PageSize: 1024, MaxSliceSize: 2048}}, 1},
		{"cap under page", []memory.PoolSpec{memory.SlicedSpec{PageSize: 1024, MaxPoolSize: 512}}, 0},
		{"too many pages", []memory.PoolSpec{memory.SlicedSpec{PageSize: 256, MaxPoolSize: 256 * 65536}}, 0},
		{"overflow", []memory.PoolSpec{memory.SlicedSpec{PageSize: ^uint64(0)}}, 0},
		{"nil", []memory.PoolSpec{nil}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := memory.Explicit(tt.pools...).Resolve(memory.DeviceProps{MemoryTotal: gib, Alignment: align})
			var le *memory.LayoutError
			require.ErrorAs(t, err, &le)
			assert.ErrorIs(t, err, memory.ErrInvalidLayout)
			assert.Equal(t, tt.pool, le.Pool)
		})
	}
}

func TestExplicitLayoutRounding(t *testing.T) {
	got, err := memory.Explicit(
		memory.SlicedSpec{PageSize: 1000, MaxPoolSize: 3000},
		memory.ExclusiveSpec{MaxAllocSize: 0},
		memory.ExclusiveSpec{MaxAllocSize: 1},
		memory.DirectSpec{ReclaimAt: 77},
	).Resolve(memory.DeviceProps{MemoryTotal: gib, Alignment: 256})
	require.NoError(t, err)
	assert.Equal(t, []memory.PoolSpec{
		memory.SlicedSpec{PageSize: 1024, MaxSliceSize: 1024, MaxPoolSize: 3072},
		memory.ExclusiveSpec{},
		memory.ExclusiveSpec{MaxAllocSize: 256},
		memory.DirectSpec{ReclaimAt: 77},
	}, got)
	_, err = memory.New(nil, memory.DeviceProps{MemoryTotal: gib})
	assert.ErrorIs(t, err, memory.ErrInvalidLayout, "alignment 0")
}

// FuzzExplicitLayout checks that validation never panics, and that what it
// accepts builds a manager whose pools hold their invariants.
func FuzzExplicitLayout(f *testing.F) {
	f.Add(uint8(0), uint64(8<<20), uint64(1<<20), uint64(0), uint64(256))
	f.Add(uint8(0), uint64(1000), uint64(2000), uint64(3000), uint64(256))
	f.Add(uint8(0), uint64(256), uint64(0), uint64(256*65536), uint64(256))
	f.Add(uint8(0), ^uint64(0), uint64(0), uint64(0), uint64(16))
	f.Add(uint8(1), uint64(0), uint64(5000), uint64(0), uint64(32))
	f.Add(uint8(2), uint64(1<<30), uint64(0), uint64(0), uint64(1))
	f.Add(uint8(3), uint64(1), uint64(1), uint64(1), uint64(0))
	f.Fuzz(func(t *testing.T, kind uint8, a, b, c, align uint64) {
		var spec memory.PoolSpec
		switch kind % 4 {
		case 0:
			spec = memory.SlicedSpec{PageSize: a, MaxSliceSize: b, MaxPoolSize: c}
		case 1:
			spec = memory.ExclusiveSpec{MaxAllocSize: a, DeallocPeriod: b}
		case 2:
			spec = memory.DirectSpec{ReclaimAt: a}
		}
		props := memory.DeviceProps{MemoryTotal: 8 * gib, Alignment: align}
		got, err := memory.Explicit(spec).Resolve(props)
		if err != nil {
			require.ErrorIs(t, err, memory.ErrInvalidLayout)
			return
		}
		require.Len(t, got, 1)
		if s, ok := got[0].(memory.SlicedSpec); ok {
			require.Zero(t, s.PageSize%align)
			require.Zero(t, s.MaxSliceSize%align)
			require.LessOrEqual(t, s.MaxSliceSize, s.PageSize)
			if s.MaxPoolSize != 0 {
				require.GreaterOrEqual(t, s.MaxPoolSize, s.PageSize)
				require.LessOrEqual(t, s.MaxPoolSize/s.PageSize, uint64(65535))
			}
		}
		m, err := memory.New(nil, props, memory.WithLayout(memory.Explicit(spec)))
		require.NoError(t, err)
		require.Len(t, m.Layout(), 1)
	})
}
