// The CUDA driver API as cubehip calls it, declared by hand (no CUDA headers at build
// time, so a build needs only a C compiler): its types, one function-pointer type per
// call signature, the table of entry points that Open resolves from libcuda.so.1, and
// the calling thread's context cache. Included by queue.h and trampolines.h; includes
// nothing of the package's own.
#ifndef CUBEHIP_DRIVER_H
#define CUBEHIP_DRIVER_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUgraphNode_st* CUgraphNode;
typedef struct CUarray_st* CUarray;

// CUDA_MEMCPY2D (cuda.h, unchanged since CUDA 3.2's _v2): the memory types are a
// 4-byte enum followed by pointer-aligned fields, 128 bytes in all.
typedef struct {
	size_t srcXInBytes;
	size_t srcY;
	int srcMemoryType;
	const void* srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	size_t srcPitch;
	size_t dstXInBytes;
	size_t dstY;
	int dstMemoryType;
	void* dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	size_t dstPitch;
	size_t WidthInBytes;
	size_t Height;
} CUDA_MEMCPY2D;

_Static_assert(sizeof(CUDA_MEMCPY2D) == 128, "CUDA_MEMCPY2D layout");

enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2 };

// The call signatures, one type each; the table below names which calls share one.
typedef CUresult (*cu_void_fn)(void);
typedef CUresult (*cu_uint_fn)(unsigned);
typedef CUresult (*cu_intp_fn)(int*);
typedef CUresult (*cu_device_get_fn)(CUdevice*, int);
typedef CUresult (*cu_device_name_fn)(char*, int, CUdevice);
typedef CUresult (*cu_device_attr_fn)(int*, int, CUdevice);
typedef CUresult (*cu_device_mem_fn)(size_t*, CUdevice);
typedef CUresult (*cu_ctx_retain_fn)(CUcontext*, CUdevice);
typedef CUresult (*cu_ctx_fn)(CUcontext);
typedef CUresult (*cu_two_sizes_fn)(size_t*, size_t*);
typedef CUresult (*cu_mem_alloc_fn)(CUdeviceptr*, size_t);
typedef CUresult (*cu_mem_free_fn)(CUdeviceptr);
typedef CUresult (*cu_host_alloc_fn)(void**, size_t, unsigned);
typedef CUresult (*cu_host_free_fn)(void*);
typedef CUresult (*cu_memset_fn)(CUdeviceptr, unsigned char, size_t);
typedef CUresult (*cu_memset_async_fn)(CUdeviceptr, unsigned char, size_t, CUstream);
typedef CUresult (*cu_htod_fn)(CUdeviceptr, const void*, size_t);
typedef CUresult (*cu_dtoh_fn)(void*, CUdeviceptr, size_t);
typedef CUresult (*cu_dtod_fn)(CUdeviceptr, CUdeviceptr, size_t);
typedef CUresult (*cu_htod_async_fn)(CUdeviceptr, const void*, size_t, CUstream);
typedef CUresult (*cu_dtoh_async_fn)(void*, CUdeviceptr, size_t, CUstream);
typedef CUresult (*cu_dtod_async_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
typedef CUresult (*cu_memcpy2d_fn)(const CUDA_MEMCPY2D*);
typedef CUresult (*cu_memcpy2d_async_fn)(const CUDA_MEMCPY2D*, CUstream);
typedef CUresult (*cu_stream_create_fn)(CUstream*, unsigned);
typedef CUresult (*cu_stream_fn)(CUstream);
typedef CUresult (*cu_stream_wait_fn)(CUstream, CUevent, unsigned);
typedef CUresult (*cu_event_create_fn)(CUevent*, unsigned);
typedef CUresult (*cu_event_record_fn)(CUevent, CUstream);
typedef CUresult (*cu_event_fn)(CUevent);
typedef CUresult (*cu_event_elapsed_fn)(float*, CUevent, CUevent);
typedef CUresult (*cu_module_load_fn)(CUmodule*, const void*);
typedef CUresult (*cu_module_function_fn)(CUfunction*, CUmodule, const char*);
typedef CUresult (*cu_module_fn)(CUmodule);
typedef CUresult (*cu_module_global_fn)(CUdeviceptr*, size_t*, CUmodule, const char*);
typedef CUresult (*cu_func_get_attr_fn)(int*, int, CUfunction);
typedef CUresult (*cu_func_set_attr_fn)(CUfunction, int, int);
typedef CUresult (*cu_func_param_info_fn)(CUfunction, size_t, size_t*, size_t*);
typedef CUresult (*cu_launch_kernel_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned,
	unsigned, unsigned, unsigned, CUstream, void**, void**);
typedef CUresult (*cu_launch_coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	unsigned, CUstream, void**);
typedef CUresult (*cu_occupancy_fn)(int*, CUfunction, int, size_t);
typedef CUresult (*cu_begin_capture_fn)(CUstream, int);
typedef CUresult (*cu_end_capture_fn)(CUstream, CUgraph*);
typedef CUresult (*cu_is_capturing_fn)(CUstream, int*);
typedef CUresult (*cu_graph_nodes_fn)(CUgraph, CUgraphNode*, size_t*);
typedef CUresult (*cu_node_type_fn)(CUgraphNode, int*);
typedef CUresult (*cu_graph_instantiate_fn)(CUgraphExec*, CUgraph, unsigned long long);
typedef CUresult (*cu_exec_stream_fn)(CUgraphExec, CUstream);
typedef CUresult (*cu_exec_fn)(CUgraphExec);
typedef CUresult (*cu_graph_fn)(CUgraph);
typedef CUresult (*cu_can_access_peer_fn)(int*, CUdevice, CUdevice);
typedef CUresult (*cu_host_device_ptr_fn)(CUdeviceptr*, void*, unsigned);
typedef CUresult (*cu_write_value32_fn)(CUstream, CUdeviceptr, uint32_t, unsigned);
typedef CUresult (*cu_ctx_enable_peer_fn)(CUcontext, unsigned);
typedef CUresult (*cu_memcpy_peer_async_fn)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
typedef CUresult (*cu_pointer_attrs_fn)(unsigned, int*, void**, CUdeviceptr);

// The resolved entry points, filled once by Open before any call (platform.go's
// driverSymbols names each one's library symbol). funcGetParamInfo is optional (CUDA
// 12.4 and later) and stays NULL on an older driver.
struct cubehip_cu {
	cu_uint_fn init;
	cu_intp_fn deviceGetCount;
	cu_device_get_fn deviceGet;
	cu_device_name_fn deviceGetName;
	cu_device_attr_fn deviceGetAttribute;
	cu_device_mem_fn deviceTotalMem;
	cu_ctx_retain_fn primaryCtxRetain;
	cu_ctx_fn ctxSetCurrent;
	cu_void_fn ctxSynchronize;
	cu_two_sizes_fn memGetInfo;
	cu_mem_alloc_fn memAlloc;
	cu_mem_free_fn memFree;
	cu_host_alloc_fn memHostAlloc;
	cu_host_free_fn memFreeHost;
	cu_memset_fn memsetD8;
	cu_memset_async_fn memsetD8Async;
	cu_htod_fn memcpyHtoD;
	cu_dtoh_fn memcpyDtoH;
	cu_dtod_fn memcpyDtoD;
	cu_htod_async_fn memcpyHtoDAsync;
	cu_dtoh_async_fn memcpyDtoHAsync;
	cu_dtod_async_fn memcpyDtoDAsync;
	cu_memcpy2d_fn memcpy2D;
	cu_memcpy2d_async_fn memcpy2DAsync;
	cu_stream_create_fn streamCreate;
	cu_stream_fn streamQuery, streamSynchronize, streamDestroy;
	cu_stream_wait_fn streamWaitEvent;
	cu_event_create_fn eventCreate;
	cu_event_record_fn eventRecord;
	cu_event_fn eventQuery, eventSynchronize, eventDestroy;
	cu_event_elapsed_fn eventElapsedTime;
	cu_module_load_fn moduleLoadData;
	cu_module_function_fn moduleGetFunction;
	cu_module_fn moduleUnload;
	cu_module_global_fn moduleGetGlobal;
	cu_func_get_attr_fn funcGetAttribute;
	cu_func_set_attr_fn funcSetAttribute;
	cu_func_param_info_fn funcGetParamInfo;
	cu_launch_kernel_fn launchKernel;
	cu_launch_coop_fn launchCooperativeKernel;
	cu_occupancy_fn occupancyMaxActiveBlocksPerMultiprocessor;
	cu_begin_capture_fn streamBeginCapture;
	cu_end_capture_fn streamEndCapture;
	cu_is_capturing_fn streamIsCapturing;
	cu_graph_nodes_fn graphGetNodes;
	cu_node_type_fn graphNodeGetType;
	cu_graph_instantiate_fn graphInstantiate;
	cu_exec_stream_fn graphUpload, graphLaunch;
	cu_exec_fn graphExecDestroy;
	cu_graph_fn graphDestroy;
	cu_can_access_peer_fn deviceCanAccessPeer;
	cu_ctx_enable_peer_fn ctxEnablePeerAccess;
	cu_memcpy_peer_async_fn memcpyPeerAsync;
	cu_pointer_attrs_fn pointerGetAttributes;
	// Optional: without both, no launch is flagged and every wait is cuStreamSynchronize
	// (streamflag.go).
	cu_host_device_ptr_fn memHostGetDevicePointer;
	cu_write_value32_fn streamWriteValue32;
};
extern struct cubehip_cu cubehip_cu;

// Primary contexts, retained at Open, and the per-OS-thread device and context cache.
#define CUBEHIP_MAX_DEVICES 64
extern CUcontext cubehip_primary[CUBEHIP_MAX_DEVICES];
extern __thread int cubehip_tls_dev;
extern __thread CUcontext cubehip_tls_ctx;

// cubehip_ensure_ctx makes the calling thread's current device's primary context
// current, paying cuCtxSetCurrent only when the thread's cached context differs.
static inline CUresult cubehip_ensure_ctx(void) {
	CUcontext want = cubehip_primary[cubehip_tls_dev];
	if (__builtin_expect(cubehip_tls_ctx == want, 1)) return 0;
	CUresult r = cubehip_cu.ctxSetCurrent(want);
	if (r == 0) cubehip_tls_ctx = want;
	return r;
}

#endif
