package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// FuncAttribute is one of k's attributes on this device (hipFuncGetAttribute): its
// registers, static shared memory, the dynamic shared memory a launch may ask for, and
// the others hipsys.FuncAttribute lists; one the platform cannot tell is 0. It compiles
// k first if the device never did, and returns a compile error as Compile does.
func (d *Device) FuncAttribute(k *Kernel, attr hipsys.FuncAttribute) (int, error) {
	if !k.valid() {
		return 0, fmt.Errorf("function attribute: %w: nil kernel", ErrInvalidArgument)
	}
	if !attr.Valid() {
		return 0, fmt.Errorf("function attribute of %s: %w: unknown attribute %d", k.Entry(), ErrInvalidArgument, int(attr))
	}
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	return d.srv.FuncAttribute(k.k, attr)
}

// SetFuncAttribute sets one of k's settable attributes on this device
// (hipFuncSetAttribute): MAX_DYNAMIC_SHARED_SIZE_BYTES, the most dynamic shared memory
// a launch of k may then ask for, up to what the device can give k (SharedMemPerBlockOptin
// less its static shared memory); or PREFERRED_SHARED_MEMORY_CARVEOUT (-1..100), a hint.
// Until the limit is set a launch may have all the device gives (the platform opts the
// kernel in where the device asks for that); once set, a launch over it is refused
// naming the kernel's limit and the device's. The setting belongs to the device's
// compiled function, which every Kernel of k's identity (ID) shares. It compiles k
// first if the device never did.
func (d *Device) SetFuncAttribute(k *Kernel, attr hipsys.FuncAttribute, value int) error {
	if !k.valid() {
		return fmt.Errorf("set function attribute: %w: nil kernel", ErrInvalidArgument)
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if err := d.srv.SetFuncAttribute(k.k, attr, value); err != nil {
		return err
	}
	if attr == hipsys.FuncAttributeMaxDynamicSharedSizeBytes {
		if d.dynShared == nil {
			d.dynShared = make(map[compute.KernelID]uint32)
		}
		d.dynShared[k.ID()] = uint32(value)
	}
	return nil
}

// SetMaxDynamicSharedMemory is SetFuncAttribute of MAX_DYNAMIC_SHARED_SIZE_BYTES: a
// launch of k on this device may then ask for up to bytes of dynamic shared memory.
func (d *Device) SetMaxDynamicSharedMemory(k *Kernel, bytes uint32) error {
	if uint64(bytes) > 1<<31-1 {
		return fmt.Errorf("set function attribute of %s: %w: %d bytes of dynamic shared memory", k.Entry(), ErrInvalidArgument, bytes)
	}
	return d.SetFuncAttribute(k, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, int(bytes))
}

// checkDynShared refuses a launch of k asking for more dynamic shared memory than the
// limit SetFuncAttribute gave k on this device, naming both that limit and the device's.
func (d *Device) checkDynShared(k *Kernel) error {
	lim, ok := d.dynShared[k.ID()]
	if !ok || k.k.SharedMem <= lim {
		return nil
	}
	return fmt.Errorf("launch %s: %w: %d bytes of dynamic shared memory per block, over the kernel's limit of %d on this device "+
		"(MAX_DYNAMIC_SHARED_SIZE_BYTES, SetFuncAttribute; the device's limit is %d, SharedMemPerBlockOptin)",
		k.Entry(), ErrInvalidArgument, k.k.SharedMem, lim, d.limits.sharedPerBlock)
}
