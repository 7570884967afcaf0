package main

// #include "capi.h"
import "C"

//export cubehip_kernel_max_active_blocks
func cubehip_kernel_max_active_blocks(h C.cubehip_kernel, blockThreads C.uint32_t, sharedMem C.uint32_t, out *C.int32_t) C.cubehip_status {
	if out == nil {
		return fail(argError("cubehip_kernel_max_active_blocks: blocks is NULL"))
	}
	*out = 0
	k, err := lookup[*kernel](uint64(h.id), kindKernel)
	if err != nil {
		return fail(err)
	}
	if blockThreads == 0 || blockThreads > 1<<31-1 {
		return fail(argError("cubehip_kernel_max_active_blocks: block_threads must be from 1 to 2^31-1"))
	}
	n, err := k.dev.d.MaxActiveBlocksPerMultiprocessor(k.k, int(blockThreads), uint32(sharedMem))
	k.noteCompile(err)
	if err != nil {
		return fail(err)
	}
	*out = C.int32_t(n)
	return success()
}
