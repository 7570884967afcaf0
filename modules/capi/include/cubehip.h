/*
 * cubehip.h: the C ABI of libcubehip, HIP kernels on AMD GPUs, NVIDIA GPUs and an embedded
 * cpu device, for C and C++ hosts.
 *
 * Link: cc host.c $(pkg-config --cflags --libs cubehip)
 *
 * Conventions
 * -----------
 * - Every function returns a cubehip_status: CUBEHIP_SUCCESS (0), one of HIP's statuses by
 *   its HIP number (hipErrorOutOfMemory is 2 here too), or one of cubehip's own (10001 and
 *   up). After a failed call, cubehip_last_error() gives the calling thread's message for it.
 * - Objects are handles: small structs around a 64-bit id. A handle that was released,
 *   destroyed, closed with its device, made up, or of the wrong kind is
 *   CUBEHIP_ERROR_INVALID_HANDLE, never a crash. The zero handle is never valid.
 * - No pointer a function is given is kept after it returns: the library copies what it
 *   needs (sources, arguments, host data).
 * - Strings are returned into caller storage with snprintf's contract: at most cap bytes
 *   are written, always NUL-terminated when cap > 0, and *len (when not NULL) receives the
 *   full length without the NUL, so a caller can size a buffer and ask again.
 * - Streams are numbered: stream 0 is the device's default; any uint64_t is a stream id,
 *   and ids are spread over the device's streams as CubeCL does: id mod max_streams
 *   (cubehip_device_options; 128 by default), so ids that differ by a multiple of it share
 *   a device stream (see cubehip_capture_begin).
 *
 * Failures are carried by buffers: a launch, write or replay that fails does not return
 * its failure from the call that queued it. The failure is carried by exactly the buffers
 * that work would have written, and returned by the next read, check or sync of any of
 * them, on any stream. A read never returns bytes that nothing wrote.
 *
 * Threads
 * -------
 * Every function is safe from any number of threads at once, including threads the Go
 * runtime inside the library never saw. The library contains a Go runtime:
 * - one per process; the library is never unloaded (dlclose does not unload it);
 * - fork() without exec() in a process that has called into the library is unsupported:
 *   the child inherits a runtime whose threads did not survive the fork;
 * - the runtime installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGPIPE and the real-time
 *   signal it preempts with (SIGURG) with SA_ONSTACK. A host that installs its own handlers
 *   must install them with SA_ONSTACK, and must install them before its first call into
 *   the library if it wants the runtime to forward signals it does not use to them.
 */
#ifndef CUBEHIP_H
#define CUBEHIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header. cubehip_version() gives the library's; a library serves
 * every header of the same major version. */
#define CUBEHIP_VERSION_MAJOR 0
#define CUBEHIP_VERSION_MINOR 1
#define CUBEHIP_VERSION_PATCH 0

/* ---- statuses ----------------------------------------------------------------------- */

typedef int32_t cubehip_status;

#define CUBEHIP_SUCCESS 0
/* HIP's statuses keep HIP's numbers; the ones a host most often tests: */
#define CUBEHIP_HIP_ERROR_INVALID_VALUE 1
#define CUBEHIP_HIP_ERROR_OUT_OF_MEMORY 2
#define CUBEHIP_HIP_ERROR_INVALID_CONFIGURATION 9
#define CUBEHIP_HIP_ERROR_NO_DEVICE 100
#define CUBEHIP_HIP_ERROR_INVALID_DEVICE 101
#define CUBEHIP_HIP_ERROR_INVALID_IMAGE 200
#define CUBEHIP_HIP_ERROR_FILE_NOT_FOUND 301
#define CUBEHIP_HIP_ERROR_INVALID_HANDLE 400
#define CUBEHIP_HIP_ERROR_NOT_FOUND 500
#define CUBEHIP_HIP_ERROR_NOT_READY 600
#define CUBEHIP_HIP_ERROR_ILLEGAL_ADDRESS 700
#define CUBEHIP_HIP_ERROR_LAUNCH_OUT_OF_RESOURCES 701
#define CUBEHIP_HIP_ERROR_LAUNCH_FAILURE 719
#define CUBEHIP_HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE 720
#define CUBEHIP_HIP_ERROR_NOT_SUPPORTED 801
#define CUBEHIP_HIP_ERROR_STREAM_CAPTURE_UNSUPPORTED 900
#define CUBEHIP_HIP_ERROR_STREAM_CAPTURE_INVALIDATED 901
#define CUBEHIP_HIP_ERROR_UNKNOWN 999
/* cubehip's own. */
#define CUBEHIP_ERROR_INVALID_HANDLE 10001   /* a released, destroyed, closed, made-up or wrong-kind handle */
#define CUBEHIP_ERROR_INVALID_ARGUMENT 10002 /* a NULL pointer, a wrong size, count or kind: nothing was done */
#define CUBEHIP_ERROR_COMPILE 10003          /* a kernel did not compile: cubehip_kernel_log has the log */
#define CUBEHIP_ERROR_CLOSED 10004           /* the device was closed */
#define CUBEHIP_ERROR_CAPTURE_REFUSED 10005  /* work inside a capture failed or cannot be captured */
#define CUBEHIP_ERROR_UNSUPPORTED 10006      /* a request the device or the library cannot serve */
#define CUBEHIP_ERROR_INTERNAL 10007         /* a failure with no HIP status of its own: the message says what */

/* A fixed, static name for a status ("hipErrorOutOfMemory", "CUBEHIP_ERROR_INVALID_HANDLE");
 * "unknown status" for a number that is none. Never NULL. */
const char* cubehip_status_string(cubehip_status status);

/* The calling thread's message for its last failed call, or "" when its last call
 * succeeded: every function that returns a cubehip_status empties it when it returns
 * CUBEHIP_SUCCESS, except cubehip_device_count's answer of 0 devices, which leaves the
 * reason. cubehip_status_string, cubehip_version and this function leave it as it is, so
 * a host may print a status's name and the message in one call. Valid until the thread's
 * next call of a function that returns a cubehip_status. Never NULL. The message's memory
 * is the thread's, freed when the thread exits. */
const char* cubehip_last_error(void);

/* ---- version ------------------------------------------------------------------------ */

/* The library's version as MAJOR * 10000 + MINOR * 100 + PATCH. */
uint32_t cubehip_version(void);

/* ---- handles ------------------------------------------------------------------------ */

typedef struct cubehip_device {
	uint64_t id;
} cubehip_device;
typedef struct cubehip_buffer {
	uint64_t id;
} cubehip_buffer;
typedef struct cubehip_kernel {
	uint64_t id;
} cubehip_kernel;
typedef struct cubehip_module {
	uint64_t id;
} cubehip_module;
typedef struct cubehip_graph {
	uint64_t id;
} cubehip_graph;
typedef struct cubehip_profile {
	uint64_t id;
} cubehip_profile;

/* ---- platforms and devices ---------------------------------------------------------- */

/* Properties of a device. Set size to sizeof(cubehip_device_props) before the call: a
 * later library fills only the fields an older header knows. */
typedef struct cubehip_device_props {
	size_t size;
	char platform[16]; /* "cpu", "nvidia", "amd" */
	char name[256];    /* "NVIDIA H200", the CPU's brand string, ... */
	char arch[64];     /* "sm_90", "gfx90a:sramecc+:xnack-", "x86-64-v3" */
	uint64_t total_mem;
	uint64_t shared_mem_per_block;
	int32_t warp_size;
	int32_t multiprocessor_count;
	int32_t clock_rate_khz;
	int32_t max_threads_per_block;
	int32_t max_threads_dim[3];
	int32_t max_grid_size[3];
	int32_t major, minor; /* compute capability (nvidia), gfx version (amd), 0.0 (cpu) */
	int32_t pci_bus_id, pci_device_id, pci_domain_id;
	int32_t integrated; /* 1 when the device shares the host's memory */
	/* Since 0.2: the dynamic shared memory a block may ask for, which is more than
	 * shared_mem_per_block on NVIDIA GPUs (the library opts a kernel in when a launch asks
	 * for more than 48 KiB). A caller built with an older header passes a smaller size and
	 * gets the fields it knows, nothing written past them. */
	uint64_t shared_mem_per_block_optin;
} cubehip_device_props;

/* The devices of a platform ("auto", "cpu", "nvidia", "amd"; NULL is "auto"). A platform
 * whose library is absent or that has no device gives 0 and CUBEHIP_SUCCESS; the reason is
 * in cubehip_last_error(). */
cubehip_status cubehip_device_count(const char* platform, int32_t* count);

/* The properties of device index of a platform, without opening it. */
cubehip_status cubehip_device_properties(const char* platform, int32_t index, cubehip_device_props* props);

/* Options of cubehip_device_open. Set size to sizeof(cubehip_device_options); a zeroed
 * struct (with its size) is the defaults. */
typedef struct cubehip_device_options {
	size_t size;
	uint32_t max_streams;   /* device streams the ids are spread over (0: the default) */
	const char* cache_dir;  /* kernel disk cache: NULL the default, "-" none */
	uint64_t staging_chunk; /* pinned staging chunk in bytes (0: 16 MiB) */
	uint32_t staging_depth; /* chunks in flight (0: 3) */
	int32_t direct_launch;  /* 1: every launch on the calling thread, never a launch queue */
	/* Appended (read only when size covers it): */
	const char* check;      /* kernel checks, a comma list: "memcheck", "initcheck", "synccheck",
	                         * "racecheck", or "all"; NULL none. $CUBEHIP_CHECK adds to it. The cpu
	                         * device only: elsewhere opening fails, saying to run on the cpu device
	                         * (docs/checking.md) */
} cubehip_device_options;

/* Opens device index of platform (NULL or "auto": amd, else nvidia, else the cpu device;
 * $CUBEHIP_PLATFORM overrides auto). options may be NULL. */
cubehip_status cubehip_device_open(const char* platform, int32_t index, const cubehip_device_options* options,
	cubehip_device* device);

/* Waits for the device's work and closes it: every handle it made becomes invalid. */
cubehip_status cubehip_device_close(cubehip_device device);

/* The properties of an open device. */
cubehip_status cubehip_device_get_properties(cubehip_device device, cubehip_device_props* props);

/* Waits for every piece of work the device queued on the stream so far. A device fault
 * the work ran into is returned; a failure carried by a buffer is returned by that
 * buffer's read, check or sync (cubehip_buffer_sync), not here. (On nvidia, a sync that
 * follows a launch may wait on a flag the stream writes after the launch, faster than the
 * driver's own wait: it covers the device's work, not work another library queued on the
 * stream's native handle after the device's last call.) */
cubehip_status cubehip_device_sync(cubehip_device device, uint64_t stream);

/* ---- buffers ------------------------------------------------------------------------ */

/* Allocates size bytes on the device, from the stream's pools. The contents are
 * undefined until written. */
cubehip_status cubehip_buffer_alloc(cubehip_device device, uint64_t stream, uint64_t size, cubehip_buffer* buffer);

/* The element type a buffer may declare (cubehip_buffer_alloc_typed). A launch checks a
 * typed buffer against the kernel's declaration of the pointer it goes to, as Go checks a
 * buffer of a typed slice: the declared element type must have the buffer's width and be
 * integer where the buffer's is, floating point where it is (signedness may differ:
 * unsigned* takes an I32 buffer, as C++ allows). A pointer to void, char or unsigned char,
 * and one whose element type the declaration does not spell as a C scalar type (a
 * typedef, a struct, a template parameter, a macro), takes any buffer. A mismatch (a
 * const float* given an F64 buffer) is CUBEHIP_ERROR_INVALID_ARGUMENT, the launch queues
 * nothing, and cubehip_last_error() names the parameter, its declaration and the buffer's
 * type: "argument 2 (x): a buffer of double given, the kernel takes a buffer (const
 * float* x)". An untyped buffer (cubehip_buffer_alloc, cubehip_buffer_import) is bytes
 * and goes to any pointer unchecked: allocate untyped to have a kernel read memory as
 * another type. */
typedef enum cubehip_dtype {
	CUBEHIP_DTYPE_NONE = 0, /* untyped: bytes, any pointer takes it */
	CUBEHIP_DTYPE_I8 = 1,   /* int8_t, signed char */
	CUBEHIP_DTYPE_U8 = 2,   /* uint8_t, unsigned char */
	CUBEHIP_DTYPE_I16 = 3,  /* int16_t, short */
	CUBEHIP_DTYPE_U16 = 4,  /* uint16_t, unsigned short */
	CUBEHIP_DTYPE_I32 = 5,  /* int32_t, int */
	CUBEHIP_DTYPE_U32 = 6,  /* uint32_t, unsigned int */
	CUBEHIP_DTYPE_I64 = 7,  /* int64_t, long long */
	CUBEHIP_DTYPE_U64 = 8,  /* uint64_t, unsigned long long */
	CUBEHIP_DTYPE_F32 = 9,  /* float */
	CUBEHIP_DTYPE_F64 = 10  /* double */
} cubehip_dtype;

/* cubehip_buffer_alloc of count elements of dtype (a cubehip_dtype other than NONE), and
 * the buffer remembers dtype for the launches' check above. A dtype that is no
 * cubehip_dtype, or a count whose bytes overflow 64 bits, is
 * CUBEHIP_ERROR_INVALID_ARGUMENT. cubehip_buffer_recycle keeps the type with the buffer. */
cubehip_status cubehip_buffer_alloc_typed(cubehip_device device, uint64_t stream, int32_t dtype, uint64_t count,
	cubehip_buffer* buffer);

/* The buffer's element type: the cubehip_dtype it was allocated with,
 * CUBEHIP_DTYPE_NONE for an untyped one. */
cubehip_status cubehip_buffer_dtype(cubehip_buffer buffer, int32_t* dtype);

/* Gives the buffer back. Work already queued on it completes first; the handle is
 * invalid after. */
cubehip_status cubehip_buffer_release(cubehip_buffer buffer);

/* cubehip_buffer_release for a host that keeps released buffers to hand out again, as a
 * pool does. A buffer that is idle is kept: *kept is 1, and the handle stays valid, the
 * caller's to use as a fresh allocation of its size on its stream (its bytes undefined).
 * Idle: nothing but the handle refers to its memory (no queued work, no graph that
 * recorded work on it), it carries no failure, and a wait (a sync of its stream or the
 * device) confirmed every write of it since, so no failure of its past can reach its next
 * use. Any other buffer, and an imported one, is released as by cubehip_buffer_release:
 * *kept is 0 and the handle is invalid after. A NULL kept is
 * CUBEHIP_ERROR_INVALID_ARGUMENT and changes nothing. */
cubehip_status cubehip_buffer_recycle(cubehip_buffer buffer, int32_t* kept);

/* The buffer's size in bytes. */
cubehip_status cubehip_buffer_size(cubehip_buffer buffer, uint64_t* size);

/* Copies size bytes from host memory src into the buffer at offset, ordered on the
 * stream. src may be reused as soon as the call returns. A write that fails is carried
 * by the buffer. */
cubehip_status cubehip_buffer_write(cubehip_buffer buffer, uint64_t stream, uint64_t offset, const void* src,
	uint64_t size);

/* Copies size bytes of the buffer at offset into host memory dst, after the work queued
 * before it on the stream and the buffer's last write on any stream. Returns the failure
 * the buffer carries, if any, and then dst is left as it was. */
cubehip_status cubehip_buffer_read(cubehip_buffer buffer, uint64_t stream, uint64_t offset, void* dst, uint64_t size);

/* Returns the failure the buffer carries, without waiting for work in flight. */
cubehip_status cubehip_buffer_check(cubehip_buffer buffer);

/* Waits for the work that writes the buffer and returns the failure it carries. */
cubehip_status cubehip_buffer_sync(cubehip_buffer buffer);

/* ---- kernels ------------------------------------------------------------------------ */

/* How a kernel uses a buffer parameter: the buffers it writes are those a failure of its
 * launch is carried by. */
typedef enum cubehip_access {
	CUBEHIP_ACCESS_DEFAULT = 0, /* in an argument: the kernel's declared access */
	CUBEHIP_ACCESS_READ = 1,
	CUBEHIP_ACCESS_WRITE = 2,
	CUBEHIP_ACCESS_READ_WRITE = 3
} cubehip_access;

/* A kernel: HIP C++ source with an extern "C" __global__ entry point. Set size to
 * sizeof(cubehip_kernel_desc). */
typedef struct cubehip_kernel_desc {
	size_t size;
	const char* source;
	const char* entry;
	uint32_t block[3];             /* threads per block; a 0 in y or z is 1, and all three 0 is
	                                * the default block, 256 x 1 x 1 */
	uint32_t shared_mem;           /* dynamic shared memory per block, in bytes */
	const cubehip_access* access;  /* access of each buffer parameter, in order; NULL (with
	                                * access_count 0): read from the entry's declaration in
	                                * source, as Go and Python do: a const T* parameter is
	                                * READ, any other pointer READ_WRITE. Give it for a kernel
	                                * declared through a macro or a typedef (its pointers
	                                * cannot be read), for one taking the info pointer (a
	                                * non-NULL access with access_count 0 says "no buffers"),
	                                * and for an output never read (WRITE: a failure then
	                                * spares it the check of its old contents). A launch
	                                * whose buffers the declaration does not count is
	                                * CUBEHIP_ERROR_INVALID_ARGUMENT, saying so (or the
	                                * source's compile error, when it has one). */
	size_t access_count;
	const char* const* options;    /* compiler options (for example "-DN=4") */
	size_t option_count;
	uint32_t flags;                /* CUBEHIP_KERNEL_* or'ed together; 0 for none */
} cubehip_kernel_desc;

/* Kernel flags (cubehip_kernel_desc.flags). */
enum {
	/* Launched cooperatively (hipModuleLaunchCooperativeKernel): every block of the grid
	 * runs at once, so that blocks may wait for each other, as cooperative groups'
	 * this_grid().sync() does (valid only in such a launch). A launch whose grid has more
	 * blocks than the device holds at once (cubehip_kernel_max_active_blocks times
	 * cubehip_device_props.multiprocessor_count) is
	 * CUBEHIP_HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, naming the limit, and queues
	 * nothing. On the cpu device, this_grid().sync() in a kernel launched without it
	 * fails that launch (CUBEHIP_HIP_ERROR_LAUNCH_FAILURE), naming the construct. */
	CUBEHIP_KERNEL_COOPERATIVE = 1
};

/* Creates a kernel on the device. Nothing is compiled yet: cubehip_kernel_compile does
 * it at once, a first launch otherwise. */
cubehip_status cubehip_kernel_create(cubehip_device device, const cubehip_kernel_desc* desc, cubehip_kernel* kernel);

/* Compiles the kernel now (or loads it from the kernel caches). A compile error is
 * CUBEHIP_ERROR_COMPILE, with the compiler's log in cubehip_kernel_log. */
cubehip_status cubehip_kernel_compile(cubehip_kernel kernel);

/* The compiler's log of the kernel's last failed compile ("" when none). */
cubehip_status cubehip_kernel_log(cubehip_kernel kernel, char* buf, size_t cap, size_t* len);

/* Destroys the kernel handle. Launches already queued are unaffected. */
cubehip_status cubehip_kernel_destroy(cubehip_kernel kernel);

/* How many blocks of the kernel, of block_threads threads with shared_mem bytes of dynamic
 * shared memory each, one multiprocessor of its device holds at once
 * (hipModuleOccupancyMaxActiveBlocksPerMultiprocessor; 0 for a block that cannot run).
 * Times cubehip_device_props.multiprocessor_count it is the most blocks a
 * CUBEHIP_KERNEL_COOPERATIVE launch may have. The kernel is compiled first if it was not:
 * a compile error is CUBEHIP_ERROR_COMPILE. */
cubehip_status cubehip_kernel_max_active_blocks(cubehip_kernel kernel, uint32_t block_threads, uint32_t shared_mem, int32_t* blocks);

/* A kernel function's attributes, numbered as HIP's hipFunction_attribute (and CUDA's
 * CUfunction_attribute). One the platform cannot tell reads 0 (on the cpu device all but
 * MAX_THREADS_PER_BLOCK and the two settable ones). */
typedef enum cubehip_func_attribute {
	CUBEHIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,            /* the largest block it launches with */
	CUBEHIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,                /* its static shared memory */
	CUBEHIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,                 /* its constant memory */
	CUBEHIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,                 /* local memory per thread */
	CUBEHIP_FUNC_ATTRIBUTE_NUM_REGS = 4,                         /* registers per thread */
	CUBEHIP_FUNC_ATTRIBUTE_PTX_VERSION = 5,                      /* virtual architecture, major*10+minor */
	CUBEHIP_FUNC_ATTRIBUTE_BINARY_VERSION = 6,                   /* binary architecture, major*10+minor */
	CUBEHIP_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,                    /* 1 if global loads are cached in L1 */
	CUBEHIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,    /* dynamic shared memory a launch may ask for (settable) */
	CUBEHIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9  /* percent of L1 as shared memory, -1 none (settable) */
} cubehip_func_attribute;

/* One of the kernel's attributes on its device (hipFuncGetAttribute). The kernel is
 * compiled first if it was not: a compile error is CUBEHIP_ERROR_COMPILE. An unknown
 * attribute or a NULL value is CUBEHIP_ERROR_INVALID_ARGUMENT. */
cubehip_status cubehip_kernel_get_attribute(cubehip_kernel kernel, cubehip_func_attribute attr, int* value);

/* Sets one of the kernel's settable attributes on its device (hipFuncSetAttribute):
 * MAX_DYNAMIC_SHARED_SIZE_BYTES, the most dynamic shared memory a launch of the kernel
 * may then ask for, up to what the device can give it (more is
 * CUBEHIP_HIP_ERROR_INVALID_VALUE); or PREFERRED_SHARED_MEMORY_CARVEOUT (-1..100), a
 * hint. Until the limit is set a launch may have all the device gives; once set, a launch
 * over it is CUBEHIP_ERROR_INVALID_ARGUMENT naming the kernel's limit and the device's.
 * The setting is the device's compiled function's, shared by every kernel handle of the
 * same source, entry and options. Any other attribute is CUBEHIP_HIP_ERROR_INVALID_VALUE. */
cubehip_status cubehip_kernel_set_attribute(cubehip_kernel kernel, cubehip_func_attribute attr, int value);

/* ---- modules ------------------------------------------------------------------------ */

/* A module: a source compiled with its options as one unit, once per device, loaded once,
 * its kernels taken from it by name and its __device__ and __constant__ variables shared
 * by all of them (one kernel writes a device variable, another reads it). Every kernel of
 * one source and options is of one module, whichever call made it. name_expressions are
 * the C++ kernels the compile resolves (a template's specialization "reduce<float, 256>",
 * a C++-linkage kernel "scale", an overload picked by a cast), each then taken by that
 * expression; an extern "C" kernel is taken by its name. Set size to
 * sizeof(cubehip_module_desc).
 *
 * Or the module is code compiled ahead of time: code and code_size (source NULL, no
 * options, no name_expressions), the bytes the platform's hipModuleLoadData takes (an AMD
 * code object; a cubin, PTX or fatbin on nvidia; the cpu device's object; the file
 * `cubehip compile -o DIR` writes for a device), copied and loaded as they are, never
 * compiled. Its kernels are taken by their symbols, and have no declaration to infer
 * their buffers' access from: a kernel that takes buffers needs desc.access (a launch
 * without is CUBEHIP_ERROR_INVALID_ARGUMENT saying so). Code the device refuses fails
 * cubehip_module_compile (or the first launch) with the platform's status. */
typedef struct cubehip_module_desc {
	size_t size;
	const char* source;
	const char* const* options; /* compiler options (for example "-DN=4") */
	size_t option_count;
	const char* const* name_expressions;
	size_t name_count;
	const void* code; /* compiled code, exclusive with source (read when size covers it) */
	size_t code_size;
} cubehip_module_desc;

/* Creates a module on the device. Nothing is compiled yet: cubehip_module_compile does it
 * at once, a first launch of one of its kernels otherwise. */
cubehip_status cubehip_module_create(cubehip_device device, const cubehip_module_desc* desc, cubehip_module* module);

/* Creates the module of the file at path: a source file (.hip, .cu, .cpp, .cc, .cxx,
 * .cuh, .h, .hpp) as its text, compiled with no options; anything else as code (desc.code
 * above), a kernel cache entry included. A file that cannot be read is
 * CUBEHIP_ERROR_INVALID_ARGUMENT naming it. */
cubehip_status cubehip_module_load_file(cubehip_device device, const char* path, cubehip_module* module);

/* The module of the file at path as cubehip_module_load_file reads it, without making one:
 * *is_source is 1 for a source file (its text follows) and 0 for compiled code (a kernel
 * cache entry unsealed and checked). Up to cap bytes are copied into buf (NULL with cap 0
 * asks the size); *len is the whole size. */
cubehip_status cubehip_module_file_read(const char* path, int32_t* is_source, void* buf, size_t cap, size_t* len);

/* Compiles the module now (or loads it from the kernel caches). A compile error is
 * CUBEHIP_ERROR_COMPILE, with the compiler's log in cubehip_module_log. */
cubehip_status cubehip_module_compile(cubehip_module module);

/* The compiler's log of the module's last failed compile ("" when none). */
cubehip_status cubehip_module_log(cubehip_module module, char* buf, size_t cap, size_t* len);

/* A kernel of the module: desc as for cubehip_kernel_create, with desc.source NULL and no
 * desc.options (the module's). An entry the module lacks fails its first launch (or
 * cubehip_kernel_compile) with CUBEHIP_ERROR_COMPILE, naming the kernels it defines. */
cubehip_status cubehip_module_kernel(cubehip_module module, const cubehip_kernel_desc* desc, cubehip_kernel* kernel);

/* Destroys the module handle; its kernels' handles stay valid. */
cubehip_status cubehip_module_destroy(cubehip_module module);

/* The module's variables, by symbol name, as cubehip_kernel_global_* (below) reach them
 * through any of its kernels. */
cubehip_status cubehip_module_global_size(cubehip_module module, const char* name, uint64_t* size);
cubehip_status cubehip_module_global_write(cubehip_module module, uint64_t stream, const char* name, const void* src, uint64_t size);
cubehip_status cubehip_module_global_read(cubehip_module module, uint64_t stream, const char* name, void* dst, uint64_t size);
/* A buffer over the module's variable name, without a copy (the variable's own memory,
 * imported as cubehip_buffer_import does, homed on the stream): launch arguments, reads
 * and writes through it reach the variable that the module's kernels see. The variable
 * lives as long as the device; releasing the buffer frees nothing. */
cubehip_status cubehip_module_global_buffer(cubehip_module module, uint64_t stream, const char* name, cubehip_buffer* out);

/* ---- launches ----------------------------------------------------------------------- */

typedef enum cubehip_arg_kind {
	CUBEHIP_ARG_BUFFER = 1, /* a device pointer: buffer (+ offset), with its access */
	CUBEHIP_ARG_I8,
	CUBEHIP_ARG_U8,
	CUBEHIP_ARG_I16,
	CUBEHIP_ARG_U16,
	CUBEHIP_ARG_I32,
	CUBEHIP_ARG_U32,
	CUBEHIP_ARG_I64,
	CUBEHIP_ARG_U64,
	CUBEHIP_ARG_F32,
	CUBEHIP_ARG_F64,
	CUBEHIP_ARG_BYTES, /* a by-value struct: bytes.data, bytes.size at bytes.align */
	CUBEHIP_ARG_INFO,  /* CubeCL's info words (u64), uploaded once per content, passed as a pointer: the last argument */
	CUBEHIP_ARG_POINTER /* a raw device address (u64), taken only inside a live buffer of the kernel's device: see cubehip_buffer_at */
} cubehip_arg_kind;

/* One kernel argument, in the kernel's declared order. */
typedef struct cubehip_arg {
	int32_t kind;   /* a cubehip_arg_kind */
	int32_t access; /* CUBEHIP_ARG_BUFFER: DEFAULT, or the kernel's declared access, restated */
	union {
		struct {
			cubehip_buffer buffer;
			uint64_t offset; /* bytes into the buffer: the kernel gets a pointer to that byte */
		} buffer;
		int64_t i64; /* I8 through I64 */
		uint64_t u64; /* U8 through U64 */
		float f32;
		double f64;
		struct {
			const void* data;
			uint32_t size, align;
		} bytes;
		struct {
			const uint64_t* words;
			size_t count;
		} info;
	} v;
} cubehip_arg;

/* Argument constructors, one per kind, for hosts that build argument lists inline:
 *   cubehip_arg args[] = {cubehip_arg_i32(n), cubehip_arg_f32(2.0f), cubehip_arg_buffer(x), cubehip_arg_buffer(y)};
 * Each gives the kind its C type says: pass a float parameter cubehip_arg_f32, an
 * unsigned int cubehip_arg_u32. (The name starts each definition's second line, so that
 * the list of exported functions the library's tests read from this header leaves them
 * out: they are defined here, not exported.) */
#define CUBEHIP_ARG_SCALAR_(name, ctype, kind_, field)                                         \
	static inline cubehip_arg                                                                  \
	name(ctype v) {                                                                            \
		cubehip_arg a = {0, 0, {{{0}, 0}}};                                                    \
		a.kind = kind_;                                                                        \
		a.v.field = v;                                                                         \
		return a;                                                                              \
	}
CUBEHIP_ARG_SCALAR_(cubehip_arg_i8, int8_t, CUBEHIP_ARG_I8, i64)
CUBEHIP_ARG_SCALAR_(cubehip_arg_u8, uint8_t, CUBEHIP_ARG_U8, u64)
CUBEHIP_ARG_SCALAR_(cubehip_arg_i16, int16_t, CUBEHIP_ARG_I16, i64)
CUBEHIP_ARG_SCALAR_(cubehip_arg_u16, uint16_t, CUBEHIP_ARG_U16, u64)
CUBEHIP_ARG_SCALAR_(cubehip_arg_i32, int32_t, CUBEHIP_ARG_I32, i64)
CUBEHIP_ARG_SCALAR_(cubehip_arg_u32, uint32_t, CUBEHIP_ARG_U32, u64)
CUBEHIP_ARG_SCALAR_(cubehip_arg_i64, int64_t, CUBEHIP_ARG_I64, i64)
CUBEHIP_ARG_SCALAR_(cubehip_arg_u64, uint64_t, CUBEHIP_ARG_U64, u64)
CUBEHIP_ARG_SCALAR_(cubehip_arg_f32, float, CUBEHIP_ARG_F32, f32)
CUBEHIP_ARG_SCALAR_(cubehip_arg_f64, double, CUBEHIP_ARG_F64, f64)
#undef CUBEHIP_ARG_SCALAR_
/* A raw device address (a pointer another part of the host kept, an offset into a buffer),
 * for a pointer parameter: the launch finds the live buffer holding it, or refuses it. */
static inline cubehip_arg
cubehip_arg_pointer(uint64_t address) {
	cubehip_arg a = {0, 0, {{{0}, 0}}};
	a.kind = CUBEHIP_ARG_POINTER;
	a.v.u64 = address;
	return a;
}
/* The whole buffer, with the kernel's declared access. */
static inline cubehip_arg
cubehip_arg_buffer(cubehip_buffer b) {
	cubehip_arg a = {0, 0, {{{0}, 0}}};
	a.kind = CUBEHIP_ARG_BUFFER;
	a.v.buffer.buffer = b;
	return a;
}
/* A by-value struct: size bytes at data, aligned to align (alignof its C type). */
static inline cubehip_arg
cubehip_arg_bytes(const void* data, uint32_t size, uint32_t align) {
	cubehip_arg a = {0, 0, {{{0}, 0}}};
	a.kind = CUBEHIP_ARG_BYTES;
	a.v.bytes.data = data;
	a.v.bytes.size = size;
	a.v.bytes.align = align;
	return a;
}

/* Queues the kernel on the stream over grid[0] x grid[1] x grid[2] blocks (a 0 in
 * grid[1] or grid[2] is 1; grid[0] == 0 is CUBEHIP_ERROR_INVALID_ARGUMENT: to launch
 * nothing for an empty input, skip the call), with the arguments in the kernel's
 * declared order (scalars first, last or between buffers, as the kernel declares them). The buffers, in the order they appear, take the accesses
 * of the kernel's desc.access (or its declaration's). A typed buffer
 * (cubehip_buffer_alloc_typed) must suit the declared element type of its pointer (see
 * cubehip_dtype); an untyped one goes to any pointer. A malformed launch is CUBEHIP_ERROR_INVALID_ARGUMENT (or
 * INVALID_HANDLE) here, queues nothing and changes no buffer: a wrong argument count, a
 * scalar whose width is not the parameter's or a buffer where the kernel takes a value
 * (where the platform lists the compiled kernel's parameters: the cpu device, AMD, and
 * NVIDIA drivers from CUDA 12.4), a scalar of the wrong kind for the parameter's declared
 * type, a value that does not fit its kind, a block, grid or shared memory over the
 * device's limits. The message names the argument ("argument 1 (a): uint32_t given, the
 * kernel takes float"). A failure of the work itself is carried by the buffers it writes.
 *
 * The platforms report each parameter's size and whether it is a pointer, not its C type,
 * so the kind of a scalar is checked against the kernel's declaration in desc.source,
 * where it declares the parameter with a C scalar type: an integer kind (I8 through U64)
 * for a float or double parameter, and F32 or F64 for an integer or bool one, are
 * refused. Signedness is not checked: CUBEHIP_ARG_I32 for an unsigned int parameter (or
 * U32 for an int) is taken, and the kernel reads the value as C converts it. Where the
 * declaration names another type (a typedef, a template parameter, a macro) only the
 * width is checked, and the kernel reads the bits as its own type. CUBEHIP_ARG_BYTES
 * passes bytes as they are to any parameter of their size. Build arguments with the
 * constructors above, by the parameter's type. */
cubehip_status cubehip_launch(cubehip_kernel kernel, uint64_t stream, const uint32_t grid[3], const cubehip_arg* args,
	size_t arg_count);

/* As cubehip_launch, with the grid read on the device from the first three u32 of
 * count_buffer when the launch runs (CubeCL's dynamic cube count), taken as they are:
 * the host never sees them, so a 0 in any of them launches nothing. */
cubehip_status cubehip_launch_dynamic(cubehip_kernel kernel, uint64_t stream, cubehip_buffer count_buffer,
	const cubehip_arg* args, size_t arg_count);

/* ---- graphs ------------------------------------------------------------------------- */

/* Starts recording the stream's work into a graph: launches and device-to-device copies
 * queued on the stream until cubehip_capture_end are recorded, not run.
 *
 * A write from host memory (cubehip_buffer_write, cubehip_kernel_global_write) on the
 * capturing stream cannot be recorded: a graph would need host memory of its own holding
 * the bytes for every replay. It is refused at the call with CUBEHIP_ERROR_CAPTURE_REFUSED
 * (the buffer is left as it was), and the capture then ends refused. Write buffers before
 * cubehip_capture_begin, or between replays.
 *
 * Stream ids share device streams (id mod max_streams; 128 by default), and a capture
 * records its device stream's work whichever id queued it. So while a stream captures,
 * work on another id of the same device stream (a launch, an allocation, a read, a
 * sync, a capture_begin or capture_end) is refused with CUBEHIP_ERROR_INVALID_ARGUMENT,
 * the message naming both ids, rather than recorded into the other id's graph. A second
 * cubehip_capture_begin on a capturing stream is CUBEHIP_ERROR_INVALID_ARGUMENT. */
cubehip_status cubehip_capture_begin(cubehip_device device, uint64_t stream);

/* Ends the recording and gives the graph. A recording in which any work failed or was
 * refused is CUBEHIP_ERROR_CAPTURE_REFUSED (*graph is {0}), and the outputs of work that
 * failed carry the failure. A stream with no capture open is
 * CUBEHIP_ERROR_INVALID_ARGUMENT. */
cubehip_status cubehip_capture_end(cubehip_device device, uint64_t stream, cubehip_graph* graph);

/* Runs the recorded work again, on the stream it was recorded on. */
cubehip_status cubehip_graph_replay(cubehip_graph graph);

/* Destroys the graph; the buffers it held are given back. */
cubehip_status cubehip_graph_destroy(cubehip_graph graph);

/* ---- profiling ---------------------------------------------------------------------- */

/* Starts a profile window on the stream, timed with device events. */
cubehip_status cubehip_profile_start(cubehip_device device, uint64_t stream, cubehip_profile* profile);

/* Ends the window and gives the device time it spans, in nanoseconds. The handle is
 * invalid after. */
cubehip_status cubehip_profile_stop(cubehip_profile profile, uint64_t* nanoseconds);

/* Ends the window without a result. */
cubehip_status cubehip_profile_abandon(cubehip_profile profile);

/* ---- traces ------------------------------------------------------------------------- */

/* A trace is a Chrome trace (JSON that Perfetto, ui.perfetto.dev, and chrome://tracing
 * open) of a device's work: one slice per launch (named by its kernel), write, read and
 * replay, on a row per stream, in device time; and one per kernel compiled or loaded
 * from the kernel disk cache (named by its entry point, with its source and any compile
 * error), on a row of its own, timed on the host's clock from the trace's start. While a
 * trace is open each operation costs two event records.
 *
 * Setting CUBEHIP_TRACE to a file name traces a host unchanged: cubehip_device_open
 * starts a trace and cubehip_device_close writes it to that file. A host that exits
 * without closing its device calls cubehip_trace_flush before it exits. */

/* Starts a trace of the device. One trace at a time: a start while one is open (the
 * CUBEHIP_TRACE one included) is CUBEHIP_ERROR_INVALID_ARGUMENT. */
cubehip_status cubehip_trace_start(cubehip_device device);

/* Ends the open trace (cubehip_trace_start's or CUBEHIP_TRACE's), waits for the device to
 * reach its last operation and writes the trace to path, replacing the file whole (it is
 * written beside it, then renamed over it). A NULL or empty path, or one whose directory
 * cannot take the file, is CUBEHIP_ERROR_INVALID_ARGUMENT and leaves the trace open; so is
 * a stop with no trace open, which writes nothing. */
cubehip_status cubehip_trace_stop(cubehip_device device, const char* path);

/* Writes the trace CUBEHIP_TRACE opened to its file now, with everything recorded so far,
 * and goes on tracing: a later flush, or cubehip_device_close, writes the file again with
 * all of it. With no such trace (CUBEHIP_TRACE was not set, or cubehip_trace_stop ended
 * it) it does nothing and returns CUBEHIP_SUCCESS, so a host may call it unconditionally,
 * as the last thing before exit(). */
cubehip_status cubehip_trace_flush(cubehip_device device);

/* ---- memory ------------------------------------------------------------------------- */

typedef struct cubehip_memory_usage {
	size_t size;
	uint64_t number_allocs;  /* slices handed out */
	uint64_t bytes_in_use;   /* bytes of those slices */
	uint64_t bytes_padding;  /* alignment padding inside them */
	uint64_t bytes_reserved; /* bytes of device memory the pools hold */
} cubehip_memory_usage;

/* The device's memory usage over all its streams. */
cubehip_status cubehip_memory_usage_get(cubehip_device device, cubehip_memory_usage* usage);

/* A report of every stream's pools, as JSON: [{"Stream": id, "Report": {"Dynamic": [pool...], "Persistent": pool}}]. */
cubehip_status cubehip_memory_report(cubehip_device device, char* buf, size_t cap, size_t* len);

/* Frees pool pages no buffer uses. The library does so itself shortly (about 100 ms)
 * after buffers are released, when the pools then reserve more than twice the bytes in
 * use plus 256 MiB: each device stream has pools of its own, and a host that gives each
 * of many threads its own stream id would otherwise keep every stream's pages reserved
 * after its threads released their buffers. */
cubehip_status cubehip_memory_cleanup(cubehip_device device);

typedef enum cubehip_allocation_mode {
	CUBEHIP_ALLOCATION_AUTO = 0,      /* pools decide */
	CUBEHIP_ALLOCATION_PERSISTENT = 1 /* allocations stay, for buffers that live long */
} cubehip_allocation_mode;

/* Sets the allocation mode of the stream's pools. */
cubehip_status cubehip_memory_set_allocation_mode(cubehip_device device, uint64_t stream, int32_t mode);

/* ---- Several devices: peers and copies between devices ---- */

/* *out is 1 when device index of platform reaches device peer directly (a copy between
 * them takes the peer path), else 0; a device is not its own peer. */
cubehip_status cubehip_device_can_access_peer(const char* platform, int32_t index, int32_t peer, int32_t* out);

/* The indexes of the devices of the same platform that device reaches directly. *count
 * is set to their number; fewer than that in capacity is CUBEHIP_ERROR_INVALID_ARGUMENT,
 * with *count telling how many to make room for. */
cubehip_status cubehip_device_peers(cubehip_device device, int32_t* peers, int32_t capacity, int32_t* count);

/* Copies all of src, a buffer of any device, into dst (the same size) on stream of dst's
 * device. Ordered after src's last write and before dst's next use; peer to peer where
 * the devices reach each other, else through host memory. A failed copy leaves dst
 * carrying the failure; a src carrying one passes it on to dst. */
cubehip_status cubehip_buffer_copy_from(cubehip_buffer dst, uint64_t stream, cubehip_buffer src);
/* ---- Module variables ----
 * A kernel's __constant__ and __device__ variables at namespace scope (a filter mask, a
 * lookup table, a counter), by symbol name: the name as written for a variable at global
 * scope in C++, the mangled name inside a namespace. The kernel is compiled for its
 * device first if it was not. size must be exactly the variable's size
 * (CUBEHIP_ERROR_INVALID_ARGUMENT otherwise); an unknown name is hipErrorNotFound. The
 * last error names the variable. A variable is not a buffer: it carries no failure, and
 * work on another stream does not wait for its writes. */

/* The variable's size in bytes. */
cubehip_status cubehip_kernel_global_size(cubehip_kernel kernel, const char* name, uint64_t* size);
/* Copies size bytes from src into the variable, queued on the stream after its earlier
 * work (the stream's next launch sees them); src may be reused when the call returns. */
cubehip_status cubehip_kernel_global_write(cubehip_kernel kernel, uint64_t stream, const char* name, const void* src, uint64_t size);
/* Copies the variable into dst after the stream's earlier work, waiting for it. */
cubehip_status cubehip_kernel_global_read(cubehip_kernel kernel, uint64_t stream, const char* name, void* dst, uint64_t size);
/* ---- Zero-copy interop ---------------------------------------------------------------- */

/* The device address of the buffer's first byte, for handing its memory to another library
 * (CuPy, PyTorch, a driver call of the host's own) without a copy. It belongs to the
 * buffer's device (cubehip_device_get_properties names its platform); on the cpu platform
 * device memory is host memory and the address is an ordinary host pointer.
 *
 * Lifetime: the address stays valid, naming this buffer's bytes, until the buffer is
 * released (the pools never move a live allocation); it holds no reference of its own.
 * Order: the device does not see what the other library does with the address, so the
 * host orders the two sides: cubehip_buffer_sync before other work reads or writes the
 * memory, and that work finished (its stream synchronized) before more of this device's
 * work uses the buffer or the buffer is released.
 *
 * A buffer whose last write failed returns that failure, and *ptr is 0. */
cubehip_status cubehip_buffer_device_pointer(cubehip_buffer buffer, uint64_t* ptr);

/* The live buffer of the device whose memory holds the device address ptr, and ptr's byte
 * in it: a raw pointer (one cubehip_buffer_device_pointer gave, plus an offset; CuPy's
 * MemoryPointer.ptr) traced back to its allocation. *out is the buffer's own handle (not a
 * new one: releasing it releases the buffer), or {0} with *offset 0 on failure.
 *
 * It fails closed: 0, and an address in no live buffer of the device (a released buffer's
 * memory, which may already be another's; another device's; memory this library neither
 * allocated nor imported) is CUBEHIP_ERROR_INVALID_ARGUMENT naming the address; import
 * another library's memory with cubehip_buffer_import first. A launch takes a raw address
 * the same way (CUBEHIP_ARG_POINTER) and records its writes on the buffer found, whose
 * next read then reports a failure of the launch. The lookup looks at every live buffer. */
cubehip_status cubehip_buffer_at(cubehip_device device, uint64_t ptr, cubehip_buffer* out, uint64_t* offset);

/* ---- kernel checks ------------------------------------------------------------------ */

/* One report of the kernel checker (cubehip_device_options.check): what a checked launch
 * did wrong, in the kernel's terms. Strings are NUL-terminated, cut to their arrays. */
typedef struct cubehip_check_report {
	size_t size;        /* set to sizeof(cubehip_check_report) before the call */
	char check[16];     /* "memcheck", "initcheck", "synccheck", "racecheck" */
	char what[128];     /* "out of bounds", "use after release", "misaligned", ... */
	char kernel[128];
	char param[64];     /* the parameter whose buffer the access is in or beside ("" none) */
	char file[128];     /* the kernel source's file name, and below its line (0 unknown) */
	uint32_t block[3], thread[3];
	uint64_t address;   /* the access: its address, size and direction */
	uint32_t access_size;
	int32_t write;
	int32_t param_index; /* -1 for none */
	int64_t offset;      /* from the start of the parameter's buffer (negative before it) */
	uint64_t buffer_size;
	int32_t line;
	uint32_t other_thread[3]; /* the other thread of a two-thread report, and its line */
	int32_t other_line;
} cubehip_check_report;

/* The reports carried by the calling thread's last error (the failure of a checked launch,
 * returned by the call that reported it: a sync, a read, a check): up to cap of them into
 * out (each out[i].size set by the host), *count how many were written and *total how
 * many the launch had (a launch keeps its first 16). *count is 0 when the last error is
 * not a checked launch's. A call that succeeds leaves the last error as it was; one it
 * refuses (NULL count or total, an out[i].size not set) sets its own. */
cubehip_status cubehip_last_check_reports(cubehip_check_report* out, size_t cap, size_t* count, size_t* total);

/* What cubehip_buffer_import calls once the device no longer uses imported memory. */
typedef void (*cubehip_release_fn)(void* user_data);

/* Makes nbytes of device memory at device_pointer, which another library allocated and
 * owns (a CuPy array's, a PyTorch tensor's, a raw cuMemAlloc or hipMalloc of the host's;
 * on the cpu platform, whose device memory is host memory, any host memory the process
 * has mapped), a buffer homed on the stream, without copying it. *out is the buffer, or
 * {0} on failure.
 *
 * The platform checks the range first: 0 for device_pointer or nbytes, a range running
 * past the end of the address space or of its allocation (CUBEHIP_ERROR_INVALID_ARGUMENT
 * or hipErrorInvalidValue), memory of another device (hipErrorInvalidDevice) and memory
 * that is not the platform's device memory (host memory on a GPU, an unmapped address on
 * the cpu device: hipErrorInvalidValue) are refused, cubehip_last_error saying which.
 *
 * The buffer works everywhere an allocated one does (launch arguments, views, reads,
 * writes, peer copies, capture and replay, carried failures). Writes through it are
 * writes to the owner's memory, and the owner's show through it: the host orders the two
 * sides, the owner's pending work on the memory done (or ordered before the stream, see
 * cubehip_stream_native_handle) before this device's work starts.
 *
 * Lifetime: the device never frees the memory and never gives it to another allocation.
 * It calls release(user_data) exactly once, when the memory is no longer used: after
 * cubehip_buffer_release, once every graph that recorded work on the buffer is destroyed,
 * and after the stream's work queued until then is done; cubehip_device_close calls the
 * release of every import still held and returns after they returned. The release is
 * called from a thread the host does not choose (one of the library's), possibly while
 * another thread of the host is inside a cubehip call: it must not wait for that thread.
 * It may call cubehip functions. A NULL release is allowed: nothing is called. On
 * failure release is not called; the memory stays the host's alone.
 *
 * Imported memory is not counted in cubehip_memory_usage or the memory report. */
cubehip_status cubehip_buffer_import(cubehip_device device, uint64_t stream, uint64_t device_pointer, uint64_t nbytes, cubehip_release_fn release, void* user_data, cubehip_buffer* out);

/* Flags of cubehip_buffer_import_flags. */
enum {
	/* The release may run on the thread whose cubehip_buffer_release (or
	 * cubehip_buffer_recycle) drops the import's last use, before that call returns and
	 * with no lock of the library's held, when the device's work queued on the memory is
	 * already done; otherwise it runs as cubehip_buffer_import says. For a host whose
	 * release would otherwise cost a thread handoff (a Python deleter takes the
	 * interpreter's lock, which the releasing thread already holds). Such a release must
	 * not wait for anything the releasing thread holds. */
	CUBEHIP_IMPORT_RELEASE_ON_CALLER = 1
};

/* cubehip_buffer_import with flags (0, or CUBEHIP_IMPORT_RELEASE_ON_CALLER); other bits
 * are CUBEHIP_ERROR_INVALID_ARGUMENT. */
cubehip_status cubehip_buffer_import_flags(cubehip_device device, uint64_t stream, uint64_t device_pointer, uint64_t nbytes, cubehip_release_fn release, void* user_data, uint32_t flags, cubehip_buffer* out);

/* The platform's own handle of the stream's device stream, created if it was not yet: a
 * CUstream on nvidia, a hipStream_t on amd, which another library of the process may wait
 * on or make wait. It is what a DLPack producer (CuPy, PyTorch) takes as the stream
 * argument of __dlpack__, ordering its pending work on a tensor before the stream's later
 * work. On the cpu platform it is the platform's number for the stream, meaningless
 * outside cubehip. Valid until cubehip_device_close; the host must not destroy it. Once
 * the handle is out, the device's launches on the stream reach the driver before
 * cubehip_launch returns, so work the other library queues on the handle afterwards runs
 * after them. Work the other library queues on it is its own to wait for:
 * cubehip_device_sync waits for the device's work, which may end before work queued
 * after the device's last call. */
cubehip_status cubehip_stream_native_handle(cubehip_device device, uint64_t stream, uint64_t* handle);

/* Exchange with another library without a host wait (DLPack's and the CUDA array
 * interface's stream arguments). native_stream is a stream that library created: a
 * CUstream on nvidia, a hipStream_t on amd; 0 is the null stream, and on nvidia 1 and 2
 * are CUDA's legacy and per-thread default streams (CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD). The host vouches that it is a live stream of the device, as it
 * vouches for an address. The cpu platform has no such streams (its memory is host
 * memory, read by host code).
 *
 * cubehip_buffer_order_before: native_stream waits, on the device, for every write this
 * device queued to the buffer so far, on whichever of its streams, and for the work
 * still queued on its other streams (which may read the buffer the other library may
 * then write); the call returns at once, and the other library's work queued on
 * native_stream afterwards sees the buffer's bytes. A buffer whose last write failed
 * returns that failure and nothing is ordered. On the cpu platform native_stream must be
 * 0 and the call waits on the host for the buffer's writes, as cubehip_buffer_sync does
 * (work of other streams still reading the buffer is the host's to finish first). The other library's later writes are the host's to order
 * before the device's next use of the buffer (cubehip_stream_wait_native). */
cubehip_status cubehip_buffer_order_before(cubehip_buffer buffer, uint64_t native_stream);

/* The stream (an id, as everywhere) waits, on the device, for everything queued so far on
 * native_stream: the other library's writes before it handed memory over are done before
 * the stream's next work. Returns at once. CUBEHIP_ERROR_INVALID_ARGUMENT on the cpu
 * platform. */
cubehip_status cubehip_stream_wait_native(cubehip_device device, uint64_t stream, uint64_t native_stream);

/* A stream the device owns and runs none of its own work on, for an export to name as
 * the stream its consumer waits on (the CUDA array interface's "stream"): order the buffer
 * before it (cubehip_buffer_order_before), then hand out *native_stream. Made on first use,
 * the same for the device's life, valid until cubehip_device_close; the host must not
 * destroy it. (Handing out a working stream's cubehip_stream_native_handle instead ends
 * the device's fast paths on that stream for good.) CUBEHIP_ERROR_INVALID_ARGUMENT on the
 * cpu platform. */
cubehip_status cubehip_device_export_stream(cubehip_device device, uint64_t* native_stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUBEHIP_H */
