// Prototypes of the trampolines in trampolines.c: one C function per driver or NVRTC
// call that Go makes, included by every cgo file of the package (ffi.go says what holds
// for them all). Every handle crosses as a uintptr_t, which keeps C pointers out of Go's
// pointer-typed values.
#ifndef CUBEHIP_TRAMPOLINES_H
#define CUBEHIP_TRAMPOLINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h> // C.malloc and C.free, for the Go side

#include "driver.h"
#include "nvrtc.h"
#include "queue.h"

// A status no CUresult uses, returned when a launch is handed more kernel arguments than
// its stack array holds; Go rejects that before calling, so it is a guard only.
#define CUBEHIP_TOO_MANY_ARGS (-1)
#define CUBEHIP_MAX_ARGS 1024
// A status no CUresult uses: the calling thread's current device is not the queue's, so
// the launch cannot be issued on it directly (cu_q_direct).
#define CUBEHIP_NOT_CURRENT (-2)

// Open.
CUresult cu_init(void);
CUresult cu_device_count(int* n);
CUresult cu_retain(int ordinal);

// Devices.
int cu_get_dev(void);
CUresult cu_set_dev(int d);
CUresult cu_device_attr(int* v, int attr, int ordinal);
CUresult cu_device_name(char* buf, int len, int ordinal);
CUresult cu_device_total_mem(size_t* v, int ordinal);
CUresult cu_ctx_sync(void);
CUresult cu_mem_info(size_t* free, size_t* total);
CUresult cu_pointer_info(CUdeviceptr p, unsigned* type, int* ordinal, CUdeviceptr* start, size_t* size);

// Memory.
CUresult cu_mem_alloc(CUdeviceptr* p, size_t n);
CUresult cu_mem_free(CUdeviceptr p);
CUresult cu_host_alloc(uintptr_t* p, size_t n, unsigned flags);
CUresult cu_host_free(uintptr_t p);
CUresult cu_memset(CUdeviceptr d, unsigned char v, size_t n);
CUresult cu_memset_async(CUdeviceptr d, unsigned char v, size_t n, uintptr_t s);
CUresult cu_memcpy_htod(CUdeviceptr d, const void* h, size_t n);
CUresult cu_memcpy_dtoh(void* h, CUdeviceptr d, size_t n);
CUresult cu_memcpy_dtod(CUdeviceptr d, CUdeviceptr s, size_t n);
CUresult cu_memcpy_htod_async(CUdeviceptr d, uintptr_t h, size_t n, uintptr_t s);
CUresult cu_memcpy_dtoh_async(uintptr_t h, CUdeviceptr d, size_t n, uintptr_t s);
CUresult cu_memcpy_dtoh_async_flag(uintptr_t h, CUdeviceptr d, size_t n, uintptr_t s, uintptr_t f, uint32_t* token);
CUresult cu_memcpy_dtod_async(CUdeviceptr d, CUdeviceptr src, size_t n, uintptr_t s);
CUresult cu_memcpy_2d(uintptr_t dst, int dstType, size_t dpitch, uintptr_t src, int srcType,
	size_t spitch, size_t width, size_t height, int async, uintptr_t s);

// Streams and events.
CUresult cu_stream_create(uintptr_t* s, unsigned flags);
CUresult cu_stream_query(uintptr_t s);
CUresult cu_stream_sync(uintptr_t s);

// A stream's completion flag (streamflag.go, trampolines.c): a word of mapped pinned
// memory that the stream itself writes after a launch, once the launch is done.
typedef struct cu_flag cu_flag;
int cu_flags_supported(void);
CUresult cu_flag_new(uintptr_t* f);
CUresult cu_stream_wait_flag(uintptr_t s, uintptr_t f, uint32_t token, uint64_t spin_ns);
CUresult cu_stream_wait_event(uintptr_t s, uintptr_t e, unsigned flags);
CUresult cu_stream_destroy(uintptr_t s);
CUresult cu_event_create(uintptr_t* e, unsigned flags);
CUresult cu_event_record(uintptr_t e, uintptr_t s);
CUresult cu_event_query(uintptr_t e);
CUresult cu_event_sync(uintptr_t e);
CUresult cu_event_elapsed(float* ms, uintptr_t a, uintptr_t b);
CUresult cu_event_destroy(uintptr_t e);

// Modules and launches.
CUresult cu_module_load(uintptr_t* m, const void* image, size_t n);
CUresult cu_module_function(uintptr_t* f, uintptr_t m, const char* name);
CUresult cu_module_unload(uintptr_t m);
CUresult cu_module_global(CUdeviceptr* p, size_t* size, uintptr_t m, const char* name);
CUresult cu_func_get_attr(int* v, int attr, uintptr_t f);
CUresult cu_func_set_attr(uintptr_t f, int attr, int v);
int cu_has_param_info(void);
CUresult cu_func_param_info(uintptr_t f, size_t index, size_t* offset, size_t* size);
CUresult cu_launch(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
	unsigned by, unsigned bz, unsigned shmem, uintptr_t s, const uint8_t* buf,
	const uint32_t* offs, int n);
CUresult cu_launch_coop(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
	unsigned by, unsigned bz, unsigned shmem, uintptr_t s, const uint8_t* buf,
	const uint32_t* offs, int n);
CUresult cu_occupancy(int* blocks, uintptr_t f, int block, size_t shmem);

// Graphs.
CUresult cu_begin_capture(uintptr_t s, int mode);
CUresult cu_end_capture(uintptr_t s, uintptr_t* g);
CUresult cu_is_capturing(uintptr_t s, int* status);
CUresult cu_graph_nodes(uintptr_t g, uintptr_t* nodes, size_t* n);
CUresult cu_node_type(uintptr_t node, int* t);
CUresult cu_graph_instantiate(uintptr_t* e, uintptr_t g);
CUresult cu_graph_upload(uintptr_t e, uintptr_t s);
CUresult cu_graph_launch(uintptr_t e, uintptr_t s);
CUresult cu_graph_exec_destroy(uintptr_t e);
CUresult cu_graph_destroy(uintptr_t g);

// The launch queue (queue.h has the queue's own functions).
CUresult cu_q_direct(cubehip_queue* q, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t s, const uint8_t* buf,
	const uint32_t* offs, int n, uintptr_t flag, uint32_t* token);
void cu_settle_current(void);
int cu_swap_dev(int d);

// NVRTC.
nvrtcResult nv_version(int* major, int* minor);
nvrtcResult nv_archs(int* out, int cap, int* n);
nvrtcResult nv_create(uintptr_t* p, const char* src, const char* name, int nh, char** headers,
	char** names);
nvrtcResult nv_compile(uintptr_t p, int n, char** opts);
nvrtcResult nv_destroy(uintptr_t p);
nvrtcResult nv_log_size(uintptr_t p, size_t* n);
nvrtcResult nv_log(uintptr_t p, char* out);
nvrtcResult nv_code_size(uintptr_t p, int cubin, size_t* n);
nvrtcResult nv_code(uintptr_t p, int cubin, char* out);
nvrtcResult nv_add_name(uintptr_t p, const char* expr);
nvrtcResult nv_lowered(uintptr_t p, const char* expr, const char** out);

// Peers.
CUresult cu_can_access_peer(int* v, int dev, int peer);
CUresult cu_enable_peer(int peer, unsigned flags);
CUresult cu_memcpy_peer_async(CUdeviceptr d, int dstDev, CUdeviceptr src, int srcDev, size_t n, uintptr_t s);

#endif
