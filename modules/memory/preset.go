package memory

import (
	"fmt"
	"math"
	"slices"
)

// Preset is a layout computed from the device: [SubSlices] (the default)
// or [ExclusivePages].
type Preset uint8

const (
	// SubSlices: a pool for zero-size allocations, a ladder of sliced pools
	// with pages a quarter of the previous one's, and an exclusive tail for
	// everything larger.
	SubSlices Preset = iota
	// ExclusivePages: 24 exclusive pools with log-spaced maxima from 32 KiB
	// to the largest page.
	ExclusivePages
)

func (p Preset) String() string {
	switch p {
	case SubSlices:
		return "SubSlices"
	case ExclusivePages:
		return "ExclusivePages"
	}
	return fmt.Sprintf("Preset(%d)", uint8(p))
}

// Pools returns the preset's pools for a device, in routing order.
func (p Preset) Pools(props DeviceProps) ([]PoolSpec, error) {
	if err := props.validate(); err != nil {
		return nil, err
	}
	switch p {
	case SubSlices:
		return subSlices(props), nil
	case ExclusivePages:
		return exclusivePages(props), nil
	}
	return nil, &LayoutError{Pool: -1, Reason: "unknown preset " + p.String()}
}

const (
	ladderFloor    = 32 << 20 // the ladder stops below 32 MiB pages
	exclusiveFloor = 32 << 10
	exclusiveCount = 24
)

func subSlices(props DeviceProps) []PoolSpec {
	align := props.Alignment
	maxPage := props.MaxPageSize()
	pools := []PoolSpec{ExclusiveSpec{}}
	var ladder []PoolSpec
	// Each rung has pages a quarter of the one above, and its largest slice
	// halves once more per rung: small pages keep small slices, so a tiny
	// tensor never pins a big page.
	cur, div := maxPage, uint64(2)
	for cur >= ladderFloor {
		cur = alignUp(cur/4, align)
		ladder = append(ladder, SlicedSpec{PageSize: cur, MaxSliceSize: alignUp(cur/div, align)})
		div *= 2
	}
	slices.Reverse(ladder)
	pools = append(pools, ladder...)
	tail := maxPage / align * align
	return append(pools, ExclusiveSpec{MaxAllocSize: tail, DeallocPeriod: deallocPeriod(tail)})
}

func exclusivePages(props DeviceProps) []PoolSpec {
	align := props.Alignment
	hi := max(props.MaxPageSize(), exclusiveFloor)
	ratio := math.Log(float64(hi) / exclusiveFloor)
	var pools []PoolSpec
	last := uint64(0)
	for i := range exclusiveCount {
		f := exclusiveFloor * math.Exp(ratio*float64(i)/float64(exclusiveCount-1))
		size := alignUp(uint64(math.Round(f)), align)
		if size == last {
			continue // small devices give equal neighbours once aligned
		}
		last = size
		pools = append(pools, ExclusiveSpec{MaxAllocSize: size, DeallocPeriod: deallocPeriod(size)})
	}
	return pools
}

// alignUp is roundUp for sizes derived from device memory, which cannot
// overflow.
func alignUp(n, align uint64) uint64 {
	r, _ := roundUp(n, align)
	return r
}
