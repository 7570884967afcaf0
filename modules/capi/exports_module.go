package main

/*
#include "capi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cubehip/cubehip/modules/server"
)

// Modules: a source compiled with its options (and its C++ name expressions) as one
// unit, its kernels taken by name, its variables shared by all of them (server.Module).

//export cubehip_module_create
func cubehip_module_create(h C.cubehip_device, desc *C.capi_cmodule_desc, out *C.cubehip_module) C.cubehip_status {
	const call = "cubehip_module_create"
	if out == nil {
		return fail(argError(call + ": module is NULL"))
	}
	out.id = 0
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	if desc == nil {
		return fail(argError(call + ": desc is NULL"))
	}
	if desc.size < C.size_t(unsafe.Offsetof(desc.name_count)+unsafe.Sizeof(desc.name_count)) {
		return fail(argError(fmt.Sprintf("%s: desc.size is %d: set it to sizeof(cubehip_module_desc)", call, desc.size)))
	}
	// desc.code came after name_count: a host built before it sets a size without it.
	if desc.size >= C.size_t(unsafe.Offsetof(desc.code_size)+unsafe.Sizeof(desc.code_size)) && (desc.code != nil || desc.code_size != 0) {
		switch {
		case desc.source != nil || desc.option_count != 0 || desc.name_count != 0:
			return fail(argError(call + ": desc.code is compiled code: desc.source, desc.options and desc.name_expressions must be unset"))
		case desc.code == nil || desc.code_size == 0:
			return fail(argError(call + ": desc.code is NULL or desc.code_size is 0: give both, or neither"))
		case desc.code_size > 1<<34:
			return fail(argError(fmt.Sprintf("%s: desc.code_size is %d bytes, more than any module", call, desc.code_size)))
		}
		m := server.NewModuleFromCode(unsafe.Slice((*byte)(desc.code), int(desc.code_size)))
		out.id = C.uint64_t(handles.add(kindModule, &module{dev: dev, m: m}))
		return success()
	}
	if desc.source == nil {
		return fail(argError(call + ": desc.source is NULL (and no desc.code)"))
	}
	options, err := cStrings(desc.options, desc.option_count, call+": desc.options")
	if err != nil {
		return fail(err)
	}
	names, err := cStrings(desc.name_expressions, desc.name_count, call+": desc.name_expressions")
	if err != nil {
		return fail(err)
	}
	m := server.NewModuleWithNames(C.GoString(desc.source), names, options...)
	out.id = C.uint64_t(handles.add(kindModule, &module{dev: dev, m: m}))
	return success()
}

//export cubehip_module_load_file
func cubehip_module_load_file(h C.cubehip_device, path *C.capi_cchar, out *C.cubehip_module) C.cubehip_status {
	const call = "cubehip_module_load_file"
	if out == nil {
		return fail(argError(call + ": module is NULL"))
	}
	out.id = 0
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	if path == nil {
		return fail(argError(call + ": path is NULL"))
	}
	m, err := server.ReadModuleFile(C.GoString(path))
	if err != nil {
		// A file that cannot be read, or a damaged cache entry, is the caller's argument.
		return fail(argError(call + ": " + err.Error()))
	}
	out.id = C.uint64_t(handles.add(kindModule, &module{dev: dev, m: m}))
	return success()
}

//export cubehip_module_file_read
func cubehip_module_file_read(path *C.capi_cchar, isSource *C.int32_t, buf unsafe.Pointer, capacity C.size_t, length *C.size_t) C.cubehip_status {
	const call = "cubehip_module_file_read"
	if path == nil || isSource == nil || length == nil {
		return fail(argError(call + ": path, is_source and len must not be NULL"))
	}
	if buf == nil && capacity > 0 {
		return fail(argError(call + ": buf is NULL but cap is not 0"))
	}
	m, err := server.ReadModuleFile(C.GoString(path))
	if err != nil {
		return fail(argError(call + ": " + err.Error()))
	}
	// The module's bytes as cubehip_module_load_file would take them, for a host that keeps
	// them itself (Python pickles a compiled module with its code): the file's format, a
	// cache entry's seal above all, is read here alone.
	data, src := m.Code(), int32(0)
	if !m.IsCode() {
		data, src = []byte(m.Source()), 1
	}
	*isSource, *length = C.int32_t(src), C.size_t(len(data))
	if capacity > 0 {
		copy(unsafe.Slice((*byte)(buf), int(capacity)), data)
	}
	return success()
}

// cStrings copies n C strings from list, what names them for an error.
func cStrings(list **C.capi_cchar, n C.size_t, what string) ([]string, error) {
	if n == 0 {
		return nil, nil
	}
	if list == nil {
		return nil, argError(what + " is NULL but its count is not 0")
	}
	if n > 4096 {
		return nil, argError(fmt.Sprintf("%s: %d strings is more than any module takes", what, n))
	}
	out := make([]string, 0, int(n))
	for i, s := range unsafe.Slice(list, int(n)) {
		if s == nil {
			return nil, argError(fmt.Sprintf("%s[%d] is NULL", what, i))
		}
		out = append(out, C.GoString(s))
	}
	return out, nil
}

//export cubehip_module_compile
func cubehip_module_compile(h C.cubehip_module) C.cubehip_status {
	m, err := lookup[*module](uint64(h.id), kindModule)
	if err != nil {
		return fail(err)
	}
	err = m.dev.d.LoadModule(m.m)
	var ce *server.CompileError
	m.mu.Lock()
	switch {
	case errors.As(err, &ce):
		m.log = ce.Log
	case err == nil:
		m.log = ""
	}
	m.mu.Unlock()
	return result(err)
}

//export cubehip_module_log
func cubehip_module_log(h C.cubehip_module, buf *C.char, capacity C.size_t, length *C.size_t) C.cubehip_status {
	m, err := lookup[*module](uint64(h.id), kindModule)
	if err != nil {
		return fail(err)
	}
	m.mu.Lock()
	log := m.log
	m.mu.Unlock()
	return result(putOut(log, buf, capacity, length))
}

//export cubehip_module_kernel
func cubehip_module_kernel(h C.cubehip_module, desc *C.capi_ckernel_desc, out *C.cubehip_kernel) C.cubehip_status {
	const call = "cubehip_module_kernel"
	if out == nil {
		return fail(argError(call + ": kernel is NULL"))
	}
	out.id = 0
	m, err := lookup[*module](uint64(h.id), kindModule)
	if err != nil {
		return fail(err)
	}
	k, io, inferred, err := kernelFromDesc(desc, m.m, call)
	if err != nil {
		return fail(err)
	}
	out.id = C.uint64_t(handles.add(kindKernel, &kernel{dev: m.dev, k: k, io: io, inferred: inferred, entry: k.Entry(), code: m.m.IsCode()}))
	return success()
}

//export cubehip_module_destroy
func cubehip_module_destroy(h C.cubehip_module) C.cubehip_status {
	if _, ok := handles.remove(uint64(h.id), kindModule); !ok {
		return fail(handleError{k: kindModule, id: uint64(h.id)})
	}
	return success()
}

// moduleGlobal is the module of handle h and the variable name the host passed, checked
// and copied.
func moduleGlobal(h C.cubehip_module, name *C.capi_cchar, call string) (*module, string, error) {
	m, err := lookup[*module](uint64(h.id), kindModule)
	if err != nil {
		return nil, "", err
	}
	if name == nil {
		return nil, "", argError(call + ": name is NULL")
	}
	n := C.GoString(name)
	if n == "" {
		return nil, "", argError(call + ": name is empty")
	}
	return m, n, nil
}

//export cubehip_module_global_size
func cubehip_module_global_size(h C.cubehip_module, name *C.capi_cchar, size *C.uint64_t) C.cubehip_status {
	const call = "cubehip_module_global_size"
	if size == nil {
		return fail(argError(call + ": size is NULL"))
	}
	*size = 0
	m, n, err := moduleGlobal(h, name, call)
	if err != nil {
		return fail(err)
	}
	return globalSize(m.dev, m.m, n, size)
}

//export cubehip_module_global_write
func cubehip_module_global_write(h C.cubehip_module, stream C.uint64_t, name *C.capi_cchar, src *C.capi_cvoid, size C.uint64_t) C.cubehip_status {
	const call = "cubehip_module_global_write"
	m, n, err := moduleGlobal(h, name, call)
	if err != nil {
		return fail(err)
	}
	return globalWrite(m.dev, m.m, n, uint64(stream), unsafe.Pointer(src), size, call)
}

//export cubehip_module_global_read
func cubehip_module_global_read(h C.cubehip_module, stream C.uint64_t, name *C.capi_cchar, dst unsafe.Pointer, size C.uint64_t) C.cubehip_status {
	const call = "cubehip_module_global_read"
	m, n, err := moduleGlobal(h, name, call)
	if err != nil {
		return fail(err)
	}
	return globalRead(m.dev, m.m, n, uint64(stream), dst, size, call)
}

//export cubehip_module_global_buffer
func cubehip_module_global_buffer(h C.cubehip_module, stream C.uint64_t, name *C.capi_cchar, out *C.cubehip_buffer) C.cubehip_status {
	const call = "cubehip_module_global_buffer"
	if out == nil {
		return fail(argError(call + ": buffer is NULL"))
	}
	out.id = 0
	m, n, err := moduleGlobal(h, name, call)
	if err != nil {
		return fail(err)
	}
	st, err := m.dev.stream(uint64(stream), call)
	if err != nil {
		return fail(err)
	}
	b, err := st.GlobalBuffer(m.m, n)
	if err != nil {
		return fail(err)
	}
	out.id = C.uint64_t(handles.add(kindBuffer, &buffer{dev: m.dev, b: b}))
	return success()
}
