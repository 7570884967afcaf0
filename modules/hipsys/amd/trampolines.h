// Prototypes of the trampolines in trampolines.c, included by every cgo file of package amd.
#ifndef CUBEHIP_AMD_TRAMPOLINES_H
#define CUBEHIP_AMD_TRAMPOLINES_H
#include <stddef.h>
#include <stdint.h>

int amdt_int_p(void* f, int* out);
int amdt_int_i(void* f, int a);
int amdt_void(void* f);
int amdt_h(void* f, uintptr_t h);
int amdt_hh(void* f, uintptr_t a, uintptr_t b);
int amdt_hhu(void* f, uintptr_t a, uintptr_t b, unsigned c);
int amdt_hi(void* f, uintptr_t h, int i);
int amdt_create(void* f, uintptr_t* out, unsigned flags);
int amdt_h_out(void* f, uintptr_t h, void* out);
int amdt_instantiate(void* f, uintptr_t* exec, uintptr_t graph);
int amdt_attr(void* f, int* out, int attr, int dev);
int amdt_devname(void* f, char* buf, int len, int dev);
int amdt_size_i(void* f, size_t* out, int dev);
int amdt_two_sizes(void* f, size_t* a, size_t* b);
int amdt_pointer_attrs(void* f, uintptr_t p, int* type, int* device);
int amdt_address_range(void* f, uintptr_t p, uintptr_t* base, size_t* size);
int amdt_props(void* f, void* props, int dev);
int amdt_alloc(void* f, uintptr_t* out, size_t n);
int amdt_hostalloc(void* f, uintptr_t* out, size_t n, unsigned flags);
int amdt_memset(void* f, uintptr_t dst, unsigned char v, size_t n);
int amdt_memset_async(void* f, uintptr_t dst, unsigned char v, size_t n, uintptr_t s);
int amdt_memcpy(void* f, void* dst, void* src, size_t n);
int amdt_memcpy_async(void* f, uintptr_t dst, uintptr_t src, size_t n, uintptr_t s);
int amdt_memcpy2d(void* f, uintptr_t dst, size_t dp, uintptr_t src, size_t sp, size_t w, size_t h, int kind);
int amdt_memcpy2d_async(void* f, uintptr_t dst, size_t dp, uintptr_t src, size_t sp, size_t w, size_t h, int kind, uintptr_t s);
int amdt_elapsed(void* f, float* ms, uintptr_t a, uintptr_t b);
int amdt_module_load(void* f, uintptr_t* out, void* image);
int amdt_get_function(void* f, uintptr_t* out, uintptr_t mod, char* name);
int amdt_get_global(void* f, uintptr_t* out, size_t* size, uintptr_t mod, char* name);
int amdt_launch(void* f, uintptr_t fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shm, uintptr_t s, unsigned char* buf, uint32_t* offs, int n);
int amdt_launch_coop(void* f, uintptr_t fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shm, uintptr_t s, unsigned char* buf, uint32_t* offs, int n);
int amdt_occupancy(void* f, int* blocks, uintptr_t fn, int block, size_t shm);
int amdt_func_attr(void* f, int* value, int attr, uintptr_t fn);
int amdt_graph_nodes(void* f, uintptr_t g, uintptr_t* nodes, size_t* n);
int amdt_rtc_create(void* f, uintptr_t* prog, char* src, char* name, int nh, char** hdrs, char** names);
int amdt_rtc_compile(void* f, uintptr_t prog, int n, char** opts);
int amdt_rtc_size(void* f, uintptr_t prog, size_t* n);
int amdt_rtc_get(void* f, uintptr_t prog, char* out);
int amdt_rtc_destroy(void* f, uintptr_t prog);
int amdt_rtc_version(void* f, int* major, int* minor);
int amdt_rtc_add_name(void* f, uintptr_t prog, char* expr);
int amdt_rtc_lowered(void* f, uintptr_t prog, char* expr, const char** out);
int amdt_isa_count(void* f, size_t* n);
int amdt_isa_name(void* f, size_t i, char* out, size_t cap);
int amdt_lib_path(void* sym, char* out, size_t cap);

// Peers.
int amdt_can_access_peer(void* f, int* v, int dev, int peer);
int amdt_enable_peer(void* f, int peer, unsigned flags);
int amdt_memcpy_peer_async(void* f, uintptr_t dst, int dstDev, uintptr_t src, int srcDev, size_t n, uintptr_t s);

#endif
