package nvidia

// The cgo boundary: trampolines.c holds one C function per driver or NVRTC call, with
// its prototypes in trampolines.h, and queue.c the launch queue's thread; every Go file
// of the package includes trampolines.h and nothing else. The driver's and NVRTC's
// prototypes are written out by hand (driver.h, nvrtc.h) rather than taken from the
// CUDA headers, so a build needs Go and a C compiler only.
//
// noescape holds for every C function here: none keeps a Go pointer past the call (the
// driver copies kernel arguments before cuLaunchKernel returns, a module image is copied
// before it is loaded, NVRTC copies sources and options), so Go memory handed to one can
// stay on the caller's stack. nocallback holds because neither the driver nor NVRTC nor
// the queue's thread ever calls into Go. Both matter on the hot paths (a launch, a small
// copy, an allocation), each budgeted against the raw driver: without noescape, Malloc's
// result variable would move to the heap on every call. The C symbols carry the cu_,
// nv_ and cubehip_ prefixes because every cgo package of a binary links into one C
// namespace.

/*
#cgo noescape cu_begin_capture
#cgo nocallback cu_begin_capture
#cgo noescape cu_ctx_sync
#cgo nocallback cu_ctx_sync
#cgo noescape cu_device_attr
#cgo nocallback cu_device_attr
#cgo noescape cu_device_count
#cgo nocallback cu_device_count
#cgo noescape cu_device_name
#cgo nocallback cu_device_name
#cgo noescape cu_device_total_mem
#cgo nocallback cu_device_total_mem
#cgo noescape cu_end_capture
#cgo nocallback cu_end_capture
#cgo noescape cu_event_create
#cgo nocallback cu_event_create
#cgo noescape cu_event_destroy
#cgo nocallback cu_event_destroy
#cgo noescape cu_event_elapsed
#cgo nocallback cu_event_elapsed
#cgo noescape cu_event_query
#cgo nocallback cu_event_query
#cgo noescape cu_event_record
#cgo nocallback cu_event_record
#cgo noescape cu_event_sync
#cgo nocallback cu_event_sync
#cgo noescape cu_func_param_info
#cgo nocallback cu_func_param_info
#cgo noescape cu_get_dev
#cgo nocallback cu_get_dev
#cgo noescape cu_graph_destroy
#cgo nocallback cu_graph_destroy
#cgo noescape cu_graph_exec_destroy
#cgo nocallback cu_graph_exec_destroy
#cgo noescape cu_graph_instantiate
#cgo nocallback cu_graph_instantiate
#cgo noescape cu_graph_launch
#cgo nocallback cu_graph_launch
#cgo noescape cu_graph_nodes
#cgo nocallback cu_graph_nodes
#cgo noescape cu_graph_upload
#cgo nocallback cu_graph_upload
#cgo noescape cu_has_param_info
#cgo nocallback cu_has_param_info
#cgo noescape cu_host_alloc
#cgo nocallback cu_host_alloc
#cgo noescape cu_host_free
#cgo nocallback cu_host_free
#cgo noescape cu_init
#cgo nocallback cu_init
#cgo noescape cu_is_capturing
#cgo nocallback cu_is_capturing
#cgo noescape cu_launch
#cgo nocallback cu_launch
#cgo noescape cu_mem_alloc
#cgo nocallback cu_mem_alloc
#cgo noescape cu_mem_free
#cgo nocallback cu_mem_free
#cgo noescape cu_mem_info
#cgo nocallback cu_mem_info
#cgo noescape cu_memcpy_2d
#cgo nocallback cu_memcpy_2d
#cgo noescape cu_memcpy_dtod
#cgo nocallback cu_memcpy_dtod
#cgo noescape cu_memcpy_dtod_async
#cgo nocallback cu_memcpy_dtod_async
#cgo noescape cu_memcpy_dtoh
#cgo nocallback cu_memcpy_dtoh
#cgo noescape cu_memcpy_dtoh_async
#cgo nocallback cu_memcpy_dtoh_async
#cgo noescape cu_memcpy_dtoh_async_flag
#cgo nocallback cu_memcpy_dtoh_async_flag
#cgo noescape cu_memcpy_htod
#cgo nocallback cu_memcpy_htod
#cgo noescape cu_memcpy_htod_async
#cgo nocallback cu_memcpy_htod_async
#cgo noescape cu_memset
#cgo nocallback cu_memset
#cgo noescape cu_memset_async
#cgo nocallback cu_memset_async
#cgo noescape cu_module_function
#cgo nocallback cu_module_function
#cgo noescape cu_module_load
#cgo nocallback cu_module_load
#cgo noescape cu_module_unload
#cgo nocallback cu_module_unload
#cgo noescape cu_node_type
#cgo nocallback cu_node_type
#cgo noescape cu_q_direct
#cgo nocallback cu_q_direct
#cgo noescape cu_retain
#cgo nocallback cu_retain
#cgo noescape cu_set_dev
#cgo nocallback cu_set_dev
#cgo noescape cu_settle_current
#cgo nocallback cu_settle_current
#cgo noescape cu_stream_create
#cgo nocallback cu_stream_create
#cgo noescape cu_stream_destroy
#cgo nocallback cu_stream_destroy
#cgo noescape cu_stream_query
#cgo nocallback cu_stream_query
#cgo noescape cu_stream_sync
#cgo nocallback cu_stream_sync
#cgo noescape cu_stream_wait_flag
#cgo nocallback cu_stream_wait_flag
#cgo noescape cu_flag_new
#cgo nocallback cu_flag_new
#cgo noescape cu_stream_wait_event
#cgo nocallback cu_stream_wait_event
#cgo noescape cu_swap_dev
#cgo nocallback cu_swap_dev
#cgo noescape cubehip_q_kick
#cgo nocallback cubehip_q_kick
#cgo noescape cubehip_q_new
#cgo nocallback cubehip_q_new
#cgo noescape cubehip_q_publish
#cgo nocallback cubehip_q_publish
#cgo noescape cubehip_q_wait
#cgo nocallback cubehip_q_wait
#cgo noescape cubehip_q_wake
#cgo nocallback cubehip_q_wake
#cgo noescape nv_archs
#cgo nocallback nv_archs
#cgo noescape nv_code
#cgo nocallback nv_code
#cgo noescape nv_code_size
#cgo nocallback nv_code_size
#cgo noescape nv_compile
#cgo nocallback nv_compile
#cgo noescape nv_create
#cgo nocallback nv_create
#cgo noescape nv_destroy
#cgo nocallback nv_destroy
#cgo noescape nv_log
#cgo nocallback nv_log
#cgo noescape nv_log_size
#cgo nocallback nv_log_size
#cgo noescape nv_version
#cgo nocallback nv_version
#include "trampolines.h"
*/
import "C"
