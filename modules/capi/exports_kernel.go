package main

/*
#include "capi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

//export cubehip_kernel_create
func cubehip_kernel_create(h C.cubehip_device, desc *C.capi_ckernel_desc, out *C.cubehip_kernel) C.cubehip_status {
	if out == nil {
		return fail(argError("cubehip_kernel_create: kernel is NULL"))
	}
	out.id = 0
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	k, io, inferred, err := kernelFromDesc(desc, nil, "cubehip_kernel_create")
	if err != nil {
		return fail(err)
	}
	out.id = C.uint64_t(handles.add(kindKernel, &kernel{dev: dev, k: k, io: io, inferred: inferred, entry: k.Entry()}))
	return success()
}

// kernelFromDesc copies everything the host described, so the host's strings and arrays
// may go as soon as the call returns. inferred is true when desc.access is NULL: each
// buffer's access is then read from the entry's declaration, as Go and Python do. A
// kernel of module mod (cubehip_module_kernel) takes the module's source and options:
// desc.source and desc.options must be unset.
func kernelFromDesc(desc *C.capi_ckernel_desc, mod *server.Module, call string) (k *server.Kernel, io []server.Access, inferred bool, err error) {
	if desc == nil {
		return nil, nil, false, argError(call + ": desc is NULL")
	}
	if desc.size < C.size_t(unsafe.Offsetof(desc.option_count)+unsafe.Sizeof(desc.option_count)) {
		return nil, nil, false, argError(fmt.Sprintf("%s: desc.size is %d: set it to sizeof(cubehip_kernel_desc)", call, desc.size))
	}
	if mod != nil && (desc.source != nil || desc.option_count != 0) {
		return nil, nil, false, argError(call + ": desc.source and desc.options must be unset: a module's kernel takes the module's")
	}
	if (mod == nil && desc.source == nil) || desc.entry == nil {
		return nil, nil, false, argError(call + ": desc.source and desc.entry must not be NULL")
	}
	var source string
	if mod == nil {
		source = C.GoString(desc.source)
	}
	entry := C.GoString(desc.entry)
	if entry == "" {
		return nil, nil, false, argError(call + ": desc.entry is empty")
	}
	if desc.access_count > 0 && desc.access == nil {
		return nil, nil, false, argError(call + ": desc.access is NULL but access_count is not 0")
	}
	if desc.access_count > 1024 || desc.option_count > 4096 {
		return nil, nil, false, argError(fmt.Sprintf("%s: %d accesses and %d options is more than any kernel has", call, desc.access_count, desc.option_count))
	}
	io = make([]server.Access, int(desc.access_count))
	if len(io) > 0 {
		for i, a := range unsafe.Slice(desc.access, len(io)) {
			switch a {
			case C.CUBEHIP_ACCESS_READ:
				io[i] = server.Read
			case C.CUBEHIP_ACCESS_WRITE:
				io[i] = server.Write
			case C.CUBEHIP_ACCESS_READ_WRITE:
				io[i] = server.ReadWrite
			default:
				return nil, nil, false, argError(fmt.Sprintf("%s: desc.access[%d] is %d, not READ, WRITE or READ_WRITE", call, i, a))
			}
		}
	}
	if desc.option_count > 0 && desc.options == nil {
		return nil, nil, false, argError(call + ": desc.options is NULL but option_count is not 0")
	}
	var opts []string
	if desc.option_count > 0 {
		for i, o := range unsafe.Slice(desc.options, int(desc.option_count)) {
			if o == nil {
				return nil, nil, false, argError(fmt.Sprintf("%s: desc.options[%d] is NULL", call, i))
			}
			opts = append(opts, C.GoString(o))
		}
	}
	block := hipsys.Dim3{X: uint32(desc.block[0]), Y: uint32(desc.block[1]), Z: uint32(desc.block[2])}
	kopts := []server.KernelOption{server.Block(block), server.SharedMem(uint32(desc.shared_mem)), server.CompilerOptions(opts...)}
	// desc.flags came after option_count: a host built before it sets a size without it.
	if desc.size >= C.size_t(unsafe.Offsetof(desc.flags)+unsafe.Sizeof(desc.flags)) {
		if f := desc.flags &^ C.CUBEHIP_KERNEL_COOPERATIVE; f != 0 {
			return nil, nil, false, argError(fmt.Sprintf("%s: desc.flags has unknown bits %#x", call, uint32(f)))
		}
		if desc.flags&C.CUBEHIP_KERNEL_COOPERATIVE != 0 {
			kopts = append(kopts, server.Cooperative())
		}
	}
	// A NULL desc.access leaves IO out, so the Device infers it from the declaration; a
	// non-NULL one, even of count 0, is the host's word ("no buffers"), which a kernel
	// taking only the info pointer needs: inference would count that pointer as a buffer.
	inferred = desc.access == nil
	if !inferred {
		kopts = append(kopts, server.IO(io...))
	}
	if mod != nil {
		k = mod.Kernel(entry, kopts...)
	} else {
		k = server.DefineKernel(source, entry, kopts...)
	}
	if inferred {
		io = k.IO()
	}
	return k, io, inferred, nil
}

//export cubehip_kernel_compile
func cubehip_kernel_compile(h C.cubehip_kernel) C.cubehip_status {
	k, err := lookup[*kernel](uint64(h.id), kindKernel)
	if err != nil {
		return fail(err)
	}
	err = k.dev.d.Compile(k.k)
	k.noteCompile(err)
	return result(err)
}

// noteCompile keeps the compiler's log of a compile's result for cubehip_kernel_log.
func (k *kernel) noteCompile(err error) {
	var ce *server.CompileError
	k.mu.Lock()
	if errors.As(err, &ce) {
		k.log = ce.Log
	} else if err == nil {
		k.log = ""
	}
	k.mu.Unlock()
}

//export cubehip_kernel_log
func cubehip_kernel_log(h C.cubehip_kernel, buf *C.char, capacity C.size_t, length *C.size_t) C.cubehip_status {
	k, err := lookup[*kernel](uint64(h.id), kindKernel)
	if err != nil {
		return fail(err)
	}
	k.mu.Lock()
	log := k.log
	k.mu.Unlock()
	return result(putOut(log, buf, capacity, length))
}

//export cubehip_kernel_destroy
func cubehip_kernel_destroy(h C.cubehip_kernel) C.cubehip_status {
	if _, ok := handles.remove(uint64(h.id), kindKernel); !ok {
		return fail(handleError{k: kindKernel, id: uint64(h.id)})
	}
	return success()
}
