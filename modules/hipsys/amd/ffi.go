package amd

// The cgo boundary: trampolines.c holds one C function per call shape, each taking the
// function pointer that dlsym resolved as its first argument. The prototypes are written
// out there rather than taken from <hip/hip_runtime_api.h>, so a build needs Go and a C
// compiler only; every
// HIP handle (hipStream_t, hipModule_t, ...) crosses as a uintptr_t, which keeps C
// pointers out of Go's pointer-typed values. hipError_t and hiprtcResult are C ints.
//
// noescape holds for every trampoline: none keeps a Go pointer past the call (HIP copies
// kernel arguments when a launch is enqueued, and hiprtc copies sources and options).
// nocallback holds because neither HIP nor hiprtc ever calls into Go. The C symbols carry
// the amdt_ prefix because every cgo package of a binary links into one C namespace.

/*
#cgo LDFLAGS: -ldl
#cgo noescape amdt_alloc
#cgo nocallback amdt_alloc
#cgo noescape amdt_attr
#cgo nocallback amdt_attr
#cgo noescape amdt_create
#cgo nocallback amdt_create
#cgo noescape amdt_devname
#cgo nocallback amdt_devname
#cgo noescape amdt_elapsed
#cgo nocallback amdt_elapsed
#cgo noescape amdt_get_function
#cgo nocallback amdt_get_function
#cgo noescape amdt_graph_nodes
#cgo nocallback amdt_graph_nodes
#cgo noescape amdt_h
#cgo nocallback amdt_h
#cgo noescape amdt_h_out
#cgo nocallback amdt_h_out
#cgo noescape amdt_hh
#cgo nocallback amdt_hh
#cgo noescape amdt_hhu
#cgo nocallback amdt_hhu
#cgo noescape amdt_hi
#cgo nocallback amdt_hi
#cgo noescape amdt_hostalloc
#cgo nocallback amdt_hostalloc
#cgo noescape amdt_instantiate
#cgo nocallback amdt_instantiate
#cgo noescape amdt_int_i
#cgo nocallback amdt_int_i
#cgo noescape amdt_int_p
#cgo nocallback amdt_int_p
#cgo noescape amdt_isa_count
#cgo nocallback amdt_isa_count
#cgo noescape amdt_isa_name
#cgo nocallback amdt_isa_name
#cgo noescape amdt_launch
#cgo nocallback amdt_launch
#cgo noescape amdt_lib_path
#cgo nocallback amdt_lib_path
#cgo noescape amdt_memcpy
#cgo nocallback amdt_memcpy
#cgo noescape amdt_memcpy2d
#cgo nocallback amdt_memcpy2d
#cgo noescape amdt_memcpy2d_async
#cgo nocallback amdt_memcpy2d_async
#cgo noescape amdt_memcpy_async
#cgo nocallback amdt_memcpy_async
#cgo noescape amdt_memset
#cgo nocallback amdt_memset
#cgo noescape amdt_memset_async
#cgo nocallback amdt_memset_async
#cgo noescape amdt_module_load
#cgo nocallback amdt_module_load
#cgo noescape amdt_props
#cgo nocallback amdt_props
#cgo noescape amdt_rtc_compile
#cgo nocallback amdt_rtc_compile
#cgo noescape amdt_rtc_create
#cgo nocallback amdt_rtc_create
#cgo noescape amdt_rtc_destroy
#cgo nocallback amdt_rtc_destroy
#cgo noescape amdt_rtc_get
#cgo nocallback amdt_rtc_get
#cgo noescape amdt_rtc_size
#cgo nocallback amdt_rtc_size
#cgo noescape amdt_size_i
#cgo nocallback amdt_size_i
#cgo noescape amdt_two_sizes
#cgo nocallback amdt_two_sizes
#cgo noescape amdt_void
#cgo nocallback amdt_void
#include "trampolines.h"
*/
import "C"
