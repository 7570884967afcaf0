/* The Python package's hot calls as Python functions (bindings/python, cubehip/_ffi.py); not
 * part of the C ABI, and unused by C hosts.
 *
 * A ctypes call costs a Python caller 0.3-0.45 µs before the library is entered (libffi's
 * call, a conversion object per argument, the GIL given up and taken back), as much as the
 * library's own work for a launch, an allocation or a release, and on the critical path of
 * a launch followed by a wait. These functions are built-in Python functions of the
 * vectorcall kind (METH_FASTCALL) made here at run time: Python calls them as it calls
 * len(), each argument an int read in place, and each calls the same exported function a C
 * host calls, so every check and every status is the C ABI's. The Python C API is looked up
 * in the process, as pydlpack.c's is, so the library does not link against Python, and
 * only the stable ABI is used (METH_FASTCALL is in it from Python 3.10).
 *
 * Every function but the launch gives the GIL up around the library call, as ctypes does:
 * a call may wait (a sync, a read, an allocation that grows a pool) and other Python
 * threads must run meanwhile. A wrong argument (not an int, out of range, a wrong
 * count) raises TypeError or OverflowError and calls nothing. Addresses are trusted as
 * ctypes' are: the package passes only those of its own arrays. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include "capi.h"

typedef struct py_object py_object;

/* PyMethodDef, as the stable ABI lays it out. */
typedef struct {
	const char* name;
	void* meth;
	int flags;
	const char* doc;
} py_method_def;
#define PY_METH_FASTCALL 0x0080

static py_object* (*py_cfunction_new)(py_method_def*, py_object*, py_object*);
static unsigned long long (*py_as_u64)(py_object*);
static py_object* (*py_from_u64)(unsigned long long);
static py_object* (*py_from_long)(long);
static py_object* (*py_err_occurred)(void);
static void (*py_err_format)(py_object*, const char*, ...);
static py_object* py_type_error;
static void* (*py_save_thread)(void);
static void (*py_restore_thread)(void*);
static py_object* (*py_tuple_new)(ssize_t);
static int (*py_tuple_set)(py_object*, ssize_t, py_object*);
static void (*py_decref)(py_object*);
static void (*py_incref)(py_object*);
static void (*py_err_clear)(void);
static long long (*py_as_i64_overflow)(py_object*, int*);
static double (*py_float_as_double)(py_object*);
static ssize_t (*py_tuple_size)(py_object*);
static py_object* (*py_tuple_get)(py_object*, ssize_t);
static py_object* (*py_getattr)(py_object*, py_object*);
static py_object* (*py_intern)(const char*);
static int (*py_unicode_eq_ascii)(py_object*, const char*);
static py_object* (*py_capsule_new)(void*, const char*, void (*)(py_object*));
static void* (*py_capsule_pointer)(py_object*, const char*);
static const char* (*py_capsule_name)(py_object*);
static py_object* (*py_no_memory)(void);
static char* (*py_bytes_data)(py_object*);
static ssize_t (*py_bytes_size)(py_object*);
static py_object* (*py_vectorcall)(py_object*, py_object* const*, size_t, py_object*);
static py_object* (*py_call_args)(py_object*, ...);
static py_object* py_none;
static py_object* py_long_type;
static py_object* py_float_type;
static py_object* py_tuple_type;
static py_object* name_h; /* "_h", interned */

/* The type of o. The stable ABI fixes PyObject's head (a reference count, then the type)
 * for every build it covers (not the free-threaded one, which does not take stable-ABI
 * extensions either). */
static py_object* type_of(py_object* o) { return ((py_object* const*)o)[1]; }

static py_object* none(void) {
	py_incref(py_none);
	return py_none;
}

/* args[i] as a uint64, or 0 with an exception set: callers test py_err_occurred only when
 * the value reads as all ones, as PyLong_AsUnsignedLongLong's contract asks. */
static int u64_arg(py_object* const* args, ssize_t i, uint64_t* out) {
	unsigned long long v = py_as_u64(args[i]);
	if (v == (unsigned long long)-1 && py_err_occurred()) return 0;
	*out = (uint64_t)v;
	return 1;
}

/* Reads nargs ints into v, or sets TypeError for a wrong count. */
static int u64_args(const char* name, py_object* const* args, ssize_t nargs, ssize_t want, uint64_t* v) {
	if (nargs != want) {
		py_err_format(py_type_error, "%s takes %d arguments (%d given)", name, (int)want, (int)nargs);
		return 0;
	}
	for (ssize_t i = 0; i < nargs; i++)
		if (!u64_arg(args, i, &v[i])) return 0;
	return 1;
}

static py_object* status_of(cubehip_status st) { return py_from_long((long)st); }

/* launch(kernel, stream, grid_address, args_address, count) -> status */
static py_object* fast_launch(py_object* self, py_object* const* args, ssize_t nargs) {
	(void)self;
	uint64_t v[5];
	if (!u64_args("launch", args, nargs, 5, v)) return NULL;
	/* The GIL is kept: a launch hands the work to the launch queue and returns, in less
	 * time than giving the lock up and taking it back costs; it waits only while the
	 * queue is full, for the driver, never for Python. */
	cubehip_status st = cubehip_launch((cubehip_kernel){v[0]}, v[1], (const uint32_t*)(uintptr_t)v[2],
		(const cubehip_arg*)(uintptr_t)v[3], (size_t)v[4]);
	return status_of(st);
}

/* device_sync(device, stream) -> status */
static py_object* fast_device_sync(py_object* self, py_object* const* args, ssize_t nargs) {
	(void)self;
	uint64_t v[2];
	if (!u64_args("device_sync", args, nargs, 2, v)) return NULL;
	void* ts = py_save_thread();
	cubehip_status st = cubehip_device_sync((cubehip_device){v[0]}, v[1]);
	py_restore_thread(ts);
	return status_of(st);
}

/* buffer_alloc(device, stream, size) -> the buffer's handle (> 0), or minus the status.
 * A handle's id keeps its top bit clear (the kind is in the top byte), so the sign says
 * which, without a tuple to build. */
static py_object* fast_buffer_alloc(py_object* self, py_object* const* args, ssize_t nargs) {
	(void)self;
	uint64_t v[3];
	if (!u64_args("buffer_alloc", args, nargs, 3, v)) return NULL;
	cubehip_buffer b = {0};
	void* ts = py_save_thread();
	cubehip_status st = cubehip_buffer_alloc((cubehip_device){v[0]}, v[1], v[2], &b);
	py_restore_thread(ts);
	if (st != 0) return py_from_long(-(long)st);
	return py_from_u64(b.id);
}

/* buffer_release(buffer) -> status */
static py_object* fast_buffer_release(py_object* self, py_object* const* args, ssize_t nargs) {
	(void)self;
	uint64_t v[1];
	if (!u64_args("buffer_release", args, nargs, 1, v)) return NULL;
	void* ts = py_save_thread();
	cubehip_status st = cubehip_buffer_release((cubehip_buffer){v[0]});
	py_restore_thread(ts);
	return status_of(st);
}

/* buffer_recycle(buffer) -> 1 kept, 0 released, or minus the status */
static py_object* fast_buffer_recycle(py_object* self, py_object* const* args, ssize_t nargs) {
	(void)self;
	uint64_t v[1];
	if (!u64_args("buffer_recycle", args, nargs, 1, v)) return NULL;
	int32_t kept = 0;
	void* ts = py_save_thread();
	cubehip_status st = cubehip_buffer_recycle((cubehip_buffer){v[0]}, &kept);
	py_restore_thread(ts);
	return py_from_long(st != 0 ? -(long)st : (long)kept);
}

/* buffer_read(buffer, stream, offset, dst_address, size) -> status */
static py_object* fast_buffer_read(py_object* self, py_object* const* args, ssize_t nargs) {
	(void)self;
	uint64_t v[5];
	if (!u64_args("buffer_read", args, nargs, 5, v)) return NULL;
	void* ts = py_save_thread();
	cubehip_status st = cubehip_buffer_read((cubehip_buffer){v[0]}, v[1], v[2], (void*)(uintptr_t)v[3], v[4]);
	py_restore_thread(ts);
	return status_of(st);
}

/* graph_replay(graph) -> status */
static py_object* fast_graph_replay(py_object* self, py_object* const* args, ssize_t nargs) {
	(void)self;
	uint64_t v[1];
	if (!u64_args("graph_replay", args, nargs, 1, v)) return NULL;
	void* ts = py_save_thread();
	cubehip_status st = cubehip_graph_replay((cubehip_graph){v[0]});
	py_restore_thread(ts);
	return status_of(st);
}

/* ---- a kernel's call and a device's sync, as built-in functions of their own ---------
 *
 * The functions above still leave a Python frame on the path of `k(grid, x, y)` and of
 * `dev.sync()`: the package's own code that checks and packs the arguments, which costs
 * about a microsecond a launch-and-sync on a slow interpreter, as much as the library's
 * whole work. kernel_launcher and device_syncer make, for one kernel or one device, a
 * built-in function that is that call: the package installs it where Python finds
 * `k(...)` and `dev.sync` (a built-in function is not a descriptor, so it is called
 * without the kernel or device, which its plan names). It takes the common case itself:
 * a grid of ints, each argument exactly of its parameter's type (a DeviceArray for a
 * buffer, an int in range, a float), the default stream or an int stream id; everything
 * else, and every call the library refuses, goes to the package's own Python function
 * (`slow`), which makes its checks and raises its errors as before. So a malformed call
 * costs what it did, and its error is the same. */

#define LAUNCH_PLAN "cubehip.launch_plan"
#define SYNC_PLAN "cubehip.sync_plan"
#define LAUNCH_MAX_ARGS 64 /* more than this, and the package keeps its own path */

/* Every plan starts with the two references it holds, which it drops when freed. */
typedef struct {
	py_object* array_type; /* a buffer argument's exact type: DeviceArray */
	py_object* slow;       /* the package's launch: slow(grid, *args, stream=...) */
	uint64_t kernel;
	size_t n;
	uint8_t kinds[LAUNCH_MAX_ARGS]; /* cubehip_arg_kind per parameter */
} launch_plan;

typedef struct {
	py_object* slow;   /* the package's sync: slow(*args, **kwargs) */
	py_object* failed; /* failed(status): raises the status's error */
	uint64_t device;
} sync_plan;

static void plan_free(py_object* capsule) {
	py_object** held = py_capsule_pointer(capsule, py_capsule_name(capsule));
	if (held == NULL) return;
	py_decref(held[0]);
	py_decref(held[1]);
	free(held);
}

/* with_plan makes a built-in function of def whose self is a capsule named name holding
 * plan, which it fills with its two references (a and b, each taken). NULL with an
 * exception set when it cannot; plan is freed then. */
static py_object* with_plan(py_method_def* def, const char* name, void* plan, py_object* a, py_object* b) {
	py_object** held = plan;
	py_incref(a);
	py_incref(b);
	held[0] = a;
	held[1] = b;
	py_object* capsule = py_capsule_new(plan, name, plan_free);
	if (capsule == NULL) {
		py_decref(a);
		py_decref(b);
		free(plan);
		return NULL;
	}
	py_object* f = py_cfunction_new(def, capsule, NULL);
	py_decref(capsule); /* the function holds it, or is NULL and it goes */
	return f;
}

/* An exact int in [lo, hi] into *out; 0 for anything else, with no exception left set. */
static int int_in(py_object* o, long long lo, long long hi, long long* out) {
	if (type_of(o) != py_long_type) return 0;
	int overflow = 0;
	long long v = py_as_i64_overflow(o, &overflow);
	if (overflow || (v == -1 && py_err_occurred())) {
		py_err_clear();
		return 0;
	}
	if (v < lo || v > hi) return 0;
	*out = v;
	return 1;
}

/* An exact int in [0, 2**64) into *out; 0 for anything else, with no exception left set. */
static int u64_in(py_object* o, uint64_t* out) {
	if (type_of(o) != py_long_type) return 0;
	unsigned long long v = py_as_u64(o);
	if (v == (unsigned long long)-1 && py_err_occurred()) {
		py_err_clear();
		return 0;
	}
	*out = (uint64_t)v;
	return 1;
}

/* The grid as the package's _dim3 takes it, for an int or a tuple of one to three ints
 * each in [1, 2**32); 0 for anything else (lists, numpy ints, out of range: the package
 * checks those, and raises for the bad ones). */
static int grid_of(py_object* g, uint32_t grid[3]) {
	long long v;
	grid[0] = grid[1] = grid[2] = 1;
	if (type_of(g) == py_long_type) {
		if (!int_in(g, 1, 0xffffffffLL, &v)) return 0;
		grid[0] = (uint32_t)v;
		return 1;
	}
	if (type_of(g) != py_tuple_type) return 0;
	ssize_t n = py_tuple_size(g);
	if (n < 1 || n > 3) return 0;
	for (ssize_t i = 0; i < n; i++) {
		if (!int_in(py_tuple_get(g, i), 1, 0xffffffffLL, &v)) return 0;
		grid[i] = (uint32_t)v;
	}
	return 1;
}

/* One argument of parameter kind into a; 0 when the value is not exactly its type. */
static int pack(const launch_plan* p, uint8_t kind, py_object* o, cubehip_arg* a) {
	long long v;
	a->kind = kind;
	a->access = 0;
	switch (kind) {
	case CUBEHIP_ARG_BUFFER: {
		if (type_of(o) != p->array_type) return 0;
		py_object* h = py_getattr(o, name_h);
		if (h == NULL) {
			py_err_clear();
			return 0;
		}
		uint64_t id = 0;
		int ok = u64_in(h, &id);
		py_decref(h);
		if (!ok || id == 0) return 0; /* a released array: the package raises */
		a->v.buffer.buffer.id = id;
		a->v.buffer.offset = 0;
		return 1;
	}
	case CUBEHIP_ARG_I8: if (!int_in(o, INT8_MIN, INT8_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case CUBEHIP_ARG_U8: if (!int_in(o, 0, UINT8_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case CUBEHIP_ARG_I16: if (!int_in(o, INT16_MIN, INT16_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case CUBEHIP_ARG_U16: if (!int_in(o, 0, UINT16_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case CUBEHIP_ARG_I32: if (!int_in(o, INT32_MIN, INT32_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case CUBEHIP_ARG_U32: if (!int_in(o, 0, UINT32_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case CUBEHIP_ARG_I64: if (!int_in(o, INT64_MIN, INT64_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case CUBEHIP_ARG_U64: return u64_in(o, &a->v.u64);
	case CUBEHIP_ARG_F32: {
		if (type_of(o) != py_float_type) return 0;
		double d = py_float_as_double(o);
		float f = (float)d;
		/* A finite double beyond float's range would arrive as infinity: the package's
		 * own call refuses it (OverflowError naming the parameter). */
		if (__builtin_isinf(f) && !__builtin_isinf(d)) return 0;
		a->v.u64 = 0;
		a->v.f32 = f;
		return 1;
	}
	case CUBEHIP_ARG_F64:
		if (type_of(o) != py_float_type) return 0;
		a->v.f64 = py_float_as_double(o);
		return 1;
	}
	return 0;
}

/* The kernel's call: k(grid, *args, stream=None). */
static py_object* kernel_call(py_object* self, py_object* const* args, ssize_t nargs, py_object* kwnames) {
	const launch_plan* p = py_capsule_pointer(self, LAUNCH_PLAN);
	if (p == NULL) return NULL;
	uint64_t stream = 0;
	if (kwnames != NULL) {
		/* One keyword, stream; its value follows the positional arguments. */
		if (py_tuple_size(kwnames) != 1 || py_unicode_eq_ascii(py_tuple_get(kwnames, 0), "stream") != 0) goto slow;
		py_object* v = args[nargs];
		if (v != py_none && !u64_in(v, &stream)) goto slow;
	}
	if ((size_t)nargs != p->n + 1) goto slow;
	uint32_t grid[3];
	if (!grid_of(args[0], grid)) goto slow;
	cubehip_arg packed[LAUNCH_MAX_ARGS];
	for (size_t i = 0; i < p->n; i++)
		if (!pack(p, p->kinds[i], args[1 + i], &packed[i])) goto slow;
	/* The GIL is kept, as fast_launch says why. */
	if (cubehip_launch((cubehip_kernel){p->kernel}, stream, grid, packed, p->n) == CUBEHIP_SUCCESS) return none();
	/* Refused, so nothing was queued: the package's call makes it again, and raises. */
slow:
	return py_vectorcall(p->slow, args, (size_t)nargs, kwnames);
}

/* The device's sync: dev.sync(), the default stream. */
static py_object* device_sync_call(py_object* self, py_object* const* args, ssize_t nargs, py_object* kwnames) {
	const sync_plan* p = py_capsule_pointer(self, SYNC_PLAN);
	if (p == NULL) return NULL;
	if (nargs != 0 || kwnames != NULL) return py_vectorcall(p->slow, args, (size_t)nargs, kwnames);
	void* ts = py_save_thread();
	cubehip_status st = cubehip_device_sync((cubehip_device){p->device}, 0);
	py_restore_thread(ts);
	if (st == CUBEHIP_SUCCESS) return none();
	/* Not made again: a failed wait reports its failure once. */
	py_object* code = py_from_long((long)st);
	if (code == NULL) return NULL;
	py_object* r = py_call_args(p->failed, code, NULL);
	py_decref(code);
	return r;
}

#define PY_METH_KEYWORDS 0x0002
static py_method_def kernel_call_def = {"launch", (void*)kernel_call, PY_METH_FASTCALL | PY_METH_KEYWORDS,
	"k(grid, *args, stream=None): the kernel's launch (cubehip's built-in fast path)"};
static py_method_def device_sync_def = {"sync", (void*)device_sync_call, PY_METH_FASTCALL | PY_METH_KEYWORDS,
	"sync(stream=None): waits for the stream's work (cubehip's built-in fast path)"};

/* kernel_launcher(kernel, kinds, array_type, slow) -> the kernel's call; kinds is bytes,
 * one cubehip_arg_kind per parameter (BUFFER and I8..F64 only). */
static py_object* make_kernel_launcher(py_object* self, py_object* const* args, ssize_t nargs) {
	(void)self;
	uint64_t kernel;
	if (nargs != 4) {
		py_err_format(py_type_error, "kernel_launcher takes 4 arguments (%d given)", (int)nargs);
		return NULL;
	}
	if (!u64_arg(args, 0, &kernel)) return NULL;
	char* kinds = py_bytes_data(args[1]);
	if (kinds == NULL) return NULL;
	ssize_t n = py_bytes_size(args[1]);
	if (n < 0 || n > LAUNCH_MAX_ARGS) {
		py_err_format(py_type_error, "kernel_launcher: %d parameters, at most %d", (int)n, LAUNCH_MAX_ARGS);
		return NULL;
	}
	for (ssize_t i = 0; i < n; i++)
		if ((uint8_t)kinds[i] < CUBEHIP_ARG_BUFFER || (uint8_t)kinds[i] > CUBEHIP_ARG_F64) {
			py_err_format(py_type_error, "kernel_launcher: parameter %d has kind %d", (int)i, (int)(uint8_t)kinds[i]);
			return NULL;
		}
	launch_plan* p = calloc(1, sizeof *p);
	if (p == NULL) return py_no_memory();
	p->kernel = kernel;
	p->n = (size_t)n;
	for (ssize_t i = 0; i < n; i++) p->kinds[i] = (uint8_t)kinds[i];
	return with_plan(&kernel_call_def, LAUNCH_PLAN, p, args[2], args[3]);
}

/* device_syncer(device, slow, failed) -> the device's sync. */
static py_object* make_device_syncer(py_object* self, py_object* const* args, ssize_t nargs) {
	(void)self;
	uint64_t device;
	if (nargs != 3) {
		py_err_format(py_type_error, "device_syncer takes 3 arguments (%d given)", (int)nargs);
		return NULL;
	}
	if (!u64_arg(args, 0, &device)) return NULL;
	sync_plan* p = calloc(1, sizeof *p);
	if (p == NULL) return py_no_memory();
	p->device = device;
	return with_plan(&device_sync_def, SYNC_PLAN, p, args[1], args[2]);
}

/* Static: a built-in function keeps a pointer to its definition for as long as it lives. */
static py_method_def fast_defs[] = {
	{"launch", (void*)fast_launch, PY_METH_FASTCALL, "launch(kernel, stream, grid_address, args_address, count) -> status"},
	{"device_sync", (void*)fast_device_sync, PY_METH_FASTCALL, "device_sync(device, stream) -> status"},
	{"buffer_alloc", (void*)fast_buffer_alloc, PY_METH_FASTCALL, "buffer_alloc(device, stream, size) -> handle, or -status"},
	{"buffer_release", (void*)fast_buffer_release, PY_METH_FASTCALL, "buffer_release(buffer) -> status"},
	{"buffer_recycle", (void*)fast_buffer_recycle, PY_METH_FASTCALL, "buffer_recycle(buffer) -> 1 kept, 0 released, or -status"},
	{"buffer_read", (void*)fast_buffer_read, PY_METH_FASTCALL, "buffer_read(buffer, stream, offset, dst_address, size) -> status"},
	{"graph_replay", (void*)fast_graph_replay, PY_METH_FASTCALL, "graph_replay(graph) -> status"},
	{"kernel_launcher", (void*)make_kernel_launcher, PY_METH_FASTCALL, "kernel_launcher(kernel, kinds, array_type, slow) -> the kernel's call"},
	{"device_syncer", (void*)make_device_syncer, PY_METH_FASTCALL, "device_syncer(device, slow, failed) -> the device's sync"},
};
#define FAST_COUNT (sizeof fast_defs / sizeof fast_defs[0])
#define FAST_HANDING_ON 7 /* fast_defs from here on make functions that hand calls on */

/* capi_python_fast_functions returns a new tuple of the functions above, in fast_defs'
 * order (the last two None where Python has no PyObject_Vectorcall), or NULL with an
 * exception set; NULL without one when the library cannot find the process's Python C API
 * (an interpreter embedded with its symbols kept local): the package then makes the same
 * calls through ctypes. Called with the GIL, through ctypes.PyDLL with a py_object result. */
py_object* capi_python_fast_functions(void) {
#define LOOK(var, name) (var = (__typeof__(var))dlsym(RTLD_DEFAULT, name))
	if (!LOOK(py_cfunction_new, "PyCFunction_NewEx") || !LOOK(py_as_u64, "PyLong_AsUnsignedLongLong") ||
	    !LOOK(py_from_u64, "PyLong_FromUnsignedLongLong") || !LOOK(py_from_long, "PyLong_FromLong") ||
	    !LOOK(py_err_occurred, "PyErr_Occurred") || !LOOK(py_err_format, "PyErr_Format") ||
	    !LOOK(py_save_thread, "PyEval_SaveThread") || !LOOK(py_restore_thread, "PyEval_RestoreThread") ||
	    !LOOK(py_tuple_new, "PyTuple_New") || !LOOK(py_tuple_set, "PyTuple_SetItem") ||
	    !LOOK(py_decref, "Py_DecRef") || !LOOK(py_incref, "Py_IncRef") || !LOOK(py_err_clear, "PyErr_Clear") ||
	    !LOOK(py_as_i64_overflow, "PyLong_AsLongLongAndOverflow") || !LOOK(py_float_as_double, "PyFloat_AsDouble") ||
	    !LOOK(py_tuple_size, "PyTuple_Size") || !LOOK(py_tuple_get, "PyTuple_GetItem") ||
	    !LOOK(py_getattr, "PyObject_GetAttr") || !LOOK(py_intern, "PyUnicode_InternFromString") ||
	    !LOOK(py_unicode_eq_ascii, "PyUnicode_CompareWithASCIIString") || !LOOK(py_capsule_new, "PyCapsule_New") ||
	    !LOOK(py_capsule_pointer, "PyCapsule_GetPointer") ||
	    !LOOK(py_capsule_name, "PyCapsule_GetName") || !LOOK(py_no_memory, "PyErr_NoMemory") || !LOOK(py_bytes_data, "PyBytes_AsString") ||
	    !LOOK(py_bytes_size, "PyBytes_Size") || !LOOK(py_call_args, "PyObject_CallFunctionObjArgs") ||
	    !LOOK(py_none, "_Py_NoneStruct") ||
	    !LOOK(py_long_type, "PyLong_Type") || !LOOK(py_float_type, "PyFloat_Type") || !LOOK(py_tuple_type, "PyTuple_Type"))
		return NULL;
	/* The kernel's and the device's own functions hand calls on with the caller's
	 * arguments as they are: they need vectorcall, which not every Python exports (3.9
	 * defines it in its headers only). Without it the package keeps its Python calls. */
	int can_hand_on = LOOK(py_vectorcall, "PyObject_Vectorcall") != NULL;
#undef LOOK
	py_object** type_error = (py_object**)dlsym(RTLD_DEFAULT, "PyExc_TypeError");
	if (type_error == NULL) return NULL;
	py_type_error = *type_error;
	if (name_h == NULL && (name_h = py_intern("_h")) == NULL) return NULL;
	py_object* t = py_tuple_new((ssize_t)FAST_COUNT);
	if (t == NULL) return NULL;
	for (size_t i = 0; i < FAST_COUNT; i++) {
		py_object* f;
		if (i >= FAST_HANDING_ON && !can_hand_on) {
			py_incref(py_none);
			f = py_none;
		} else {
			f = py_cfunction_new(&fast_defs[i], NULL, NULL);
		}
		/* PyTuple_SetItem steals f, and drops it on failure. */
		if (f == NULL || py_tuple_set(t, (ssize_t)i, f) != 0) {
			py_decref(t);
			return NULL;
		}
	}
	return t;
}
