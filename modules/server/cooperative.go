package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// MaxActiveBlocksPerMultiprocessor is how many blocks of k, of blockSize threads with
// sharedMem bytes of dynamic shared memory each, one multiprocessor of the device holds
// at once (hipModuleOccupancyMaxActiveBlocksPerMultiprocessor; 0 for a block that cannot
// run). Times Props().MultiProcessorCount it is the most blocks a Cooperative launch of k
// may have. It compiles k first if the device never did, and returns a compile error as
// Compile does.
func (d *Device) MaxActiveBlocksPerMultiprocessor(k *Kernel, blockSize int, sharedMem uint32) (int, error) {
	if !k.valid() {
		return 0, fmt.Errorf("occupancy: %w: nil kernel", ErrInvalidArgument)
	}
	if blockSize <= 0 {
		return 0, fmt.Errorf("occupancy of %s: %w: block size %d", k.Entry(), ErrInvalidArgument, blockSize)
	}
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	return d.srv.MaxActiveBlocksPerMultiprocessor(k.k, blockSize, uint64(sharedMem))
}

// coopShape is what a cooperative grid's limit depends on: the kernel and its block's
// threads and dynamic shared memory (a kernel's identity does not cover its block).
type coopShape struct {
	id      compute.KernelID
	threads uint64
	shared  uint32
}

// checkCooperative refuses a cooperative launch of k whose grid has more blocks than the
// device holds at once, with HIP's hipErrorCooperativeLaunchTooLarge naming the limit: the
// occupancy of k's block (asked once per kernel and block) times the multiprocessors.
// Nothing is queued. Where the limit cannot be learned (k does not
// compile, the platform cannot say), the launch goes on and reports what it meets.
func (d *Device) checkCooperative(k *Kernel, grid *hipsys.Dim3) error {
	mps := d.srv.Props().MultiProcessorCount
	if mps <= 0 {
		return nil
	}
	b := k.k.Block
	key := coopShape{k.ID(), b.Count(), k.k.SharedMem}
	limit, ok := d.coopLimit[key]
	if !ok {
		per, err := d.srv.MaxActiveBlocksPerMultiprocessor(k.k, int(min(b.Count(), 1<<31-1)), uint64(k.k.SharedMem))
		if err != nil {
			return nil
		}
		limit = uint64(per) * uint64(mps)
		if d.coopLimit == nil {
			d.coopLimit = make(map[coopShape]uint64)
		}
		d.coopLimit[key] = limit
	}
	if n := uint64(grid.X) * uint64(grid.Y) * uint64(grid.Z); n > limit {
		return fmt.Errorf("launch %s: %w: a cooperative grid of %d×%d×%d = %d blocks, over the %d the device holds at once "+
			"(%d blocks of %d×%d×%d threads with %d bytes of dynamic shared memory per multiprocessor × %d multiprocessors)",
			k.Entry(), hipsys.ErrorCooperativeLaunchTooLarge, grid.X, grid.Y, grid.Z, n, limit, limit/uint64(mps), b.X, b.Y, b.Z,
			k.k.SharedMem, mps)
	}
	return nil
}
