package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// limits are the device's launch limits, read once at Open, so that a launch is
// checked against them without asking the platform (a zero limit is one the platform
// does not report, and is not checked).
type limits struct {
	threadsPerBlock uint64
	blockDim        [3]uint64
	gridDim         [3]uint64
	sharedPerBlock  uint64
}

func limitsOf(p hipsys.DeviceProps) limits {
	// A block may have up to the opt-in limit: the platform opts a kernel in to it where
	// the device asks for that (NVIDIA, past 48 KiB).
	l := limits{threadsPerBlock: uint64(max(p.MaxThreadsPerBlock, 0)), sharedPerBlock: max(p.SharedMemPerBlockOptin, p.SharedMemPerBlock)}
	for i := range 3 {
		l.blockDim[i] = uint64(max(p.MaxThreadsDim[i], 0))
		l.gridDim[i] = uint64(max(p.MaxGridSize[i], 0))
	}
	return l
}

var axes = [3]string{"x", "y", "z"}

// check is a launch configuration the device cannot run, named by the limit it
// breaks: a block dimension that is zero or over its limit, a grid with no blocks in x
// (its zero Y and Z were taken as 1 before), more threads per block than
// the device runs, dynamic shared memory over the device's per-block limit, a grid
// dimension over its limit (grid is nil for a dynamic grid, checked when it is read).
// Without it, such a launch returns nil and its failure surfaces only at a later read.
func (l *limits) check(k *Kernel, grid *hipsys.Dim3) error {
	b := k.k.Block
	dims := [3]uint32{b.X, b.Y, b.Z}
	for i, v := range dims {
		if v == 0 {
			return fmt.Errorf("launch %s: %w: block %d×%d×%d has a zero %s dimension", k.Entry(), ErrInvalidArgument, b.X, b.Y, b.Z, axes[i])
		}
		if lim := l.blockDim[i]; lim != 0 && uint64(v) > lim {
			return fmt.Errorf("launch %s: %w: block %s dimension %d is over the device's limit of %d (MaxThreadsDim)", k.Entry(), ErrInvalidArgument, axes[i], v, lim)
		}
	}
	if n := uint64(b.X) * uint64(b.Y) * uint64(b.Z); l.threadsPerBlock != 0 && n > l.threadsPerBlock {
		return fmt.Errorf("launch %s: %w: block %d×%d×%d is %d threads, over the device's limit of %d per block (MaxThreadsPerBlock)", k.Entry(), ErrInvalidArgument, b.X, b.Y, b.Z, n, l.threadsPerBlock)
	}
	if sm := uint64(k.k.SharedMem); l.sharedPerBlock != 0 && sm > l.sharedPerBlock {
		return fmt.Errorf("launch %s: %w: %d bytes of dynamic shared memory per block, over the device's limit of %d (SharedMemPerBlockOptin)", k.Entry(), ErrInvalidArgument, sm, l.sharedPerBlock)
	}
	if grid != nil {
		if grid.X == 0 {
			// Not a launch of nothing: a zero count is almost always a count computed
			// wrong, and the read after it would return the old bytes as if it ran.
			return fmt.Errorf("launch %s: %w: grid %d×%d×%d has no blocks in x (to launch nothing for an empty input, skip the call)", k.Entry(), ErrInvalidArgument, grid.X, grid.Y, grid.Z)
		}
		g := [3]uint32{grid.X, grid.Y, grid.Z}
		for i, v := range g {
			if lim := l.gridDim[i]; lim != 0 && uint64(v) > lim {
				return fmt.Errorf("launch %s: %w: grid %s dimension %d is over the device's limit of %d (MaxGridSize)", k.Entry(), ErrInvalidArgument, axes[i], v, lim)
			}
		}
	}
	return nil
}
