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

/* Static: a built-in function keeps a pointer to its definition for as long as it lives. */
static py_method_def fast_defs[] = {
	{"launch", (void*)fast_launch, PY_METH_FASTCALL, "launch(kernel, stream, grid_address, args_address, count) -> status"},
	{"device_sync", (void*)fast_device_sync, PY_METH_FASTCALL, "device_sync(device, stream) -> status"},
	{"buffer_alloc", (void*)fast_buffer_alloc, PY_METH_FASTCALL, "buffer_alloc(device, stream, size) -> handle, or -status"},
	{"buffer_release", (void*)fast_buffer_release, PY_METH_FASTCALL, "buffer_release(buffer) -> status"},
	{"buffer_recycle", (void*)fast_buffer_recycle, PY_METH_FASTCALL, "buffer_recycle(buffer) -> 1 kept, 0 released, or -status"},
	{"buffer_read", (void*)fast_buffer_read, PY_METH_FASTCALL, "buffer_read(buffer, stream, offset, dst_address, size) -> status"},
	{"graph_replay", (void*)fast_graph_replay, PY_METH_FASTCALL, "graph_replay(graph) -> status"},
};
#define FAST_COUNT (sizeof fast_defs / sizeof fast_defs[0])

/* capi_python_fast_functions returns a new tuple of the functions above, in fast_defs'
 * order, or NULL with an exception set; NULL without one when the process has no Python C
 * API (the caller then keeps ctypes). Called with the GIL, through ctypes.PyDLL with a
 * py_object result. */
py_object* capi_python_fast_functions(void) {
#define LOOK(var, name) (var = (__typeof__(var))dlsym(RTLD_DEFAULT, name))
	if (!LOOK(py_cfunction_new, "PyCFunction_NewEx") || !LOOK(py_as_u64, "PyLong_AsUnsignedLongLong") ||
	    !LOOK(py_from_u64, "PyLong_FromUnsignedLongLong") || !LOOK(py_from_long, "PyLong_FromLong") ||
	    !LOOK(py_err_occurred, "PyErr_Occurred") || !LOOK(py_err_format, "PyErr_Format") ||
	    !LOOK(py_save_thread, "PyEval_SaveThread") || !LOOK(py_restore_thread, "PyEval_RestoreThread") ||
	    !LOOK(py_tuple_new, "PyTuple_New") || !LOOK(py_tuple_set, "PyTuple_SetItem") ||
	    !LOOK(py_decref, "Py_DecRef"))
		return NULL;
#undef LOOK
	py_object** type_error = (py_object**)dlsym(RTLD_DEFAULT, "PyExc_TypeError");
	if (type_error == NULL) return NULL;
	py_type_error = *type_error;
	py_object* t = py_tuple_new((ssize_t)FAST_COUNT);
	if (t == NULL) return NULL;
	for (size_t i = 0; i < FAST_COUNT; i++) {
		py_object* f = py_cfunction_new(&fast_defs[i], NULL, NULL);
		/* PyTuple_SetItem steals f, and drops it on failure. */
		if (f == NULL || py_tuple_set(t, (ssize_t)i, f) != 0) {
			py_decref(t);
			return NULL;
		}
	}
	return t;
}
