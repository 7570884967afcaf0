/* cubehip._native: the package's hot calls and its DLPack support, as a CPython extension
 * module built against the interpreter's own headers, on the stable ABI (Py_LIMITED_API
 * 3.10), so one abi3 build serves Python 3.10 and every later CPython.
 *
 * It is not linked against libcubehip: the package loads the library with ctypes (from its
 * _lib directory or $CUBEHIP_LIBRARY) and hands its path to bind(), which finds that same
 * loaded copy (RTLD_NOLOAD) and looks up the exported functions this module calls. Every
 * call here is the C ABI's own function, so every check and status is the C ABI's.
 *
 * Why C and not ctypes: a ctypes call costs as much before the library is entered (libffi,
 * a conversion object per argument, the GIL given up and taken back) as the library's own
 * work for a launch (docs/benchmarks.md, "Python: C rather than ctypes"), and a DLPack
 * capsule's deleter must run while a Python exception is in flight and on threads Python
 * never saw, where Python code cannot.
 *
 * Addresses (a grid's, an argument array's, a host array's) are trusted as ctypes trusts
 * them: the package passes only those of its own objects. */
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030A0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the C ABI (include/cubehip.h), as this module calls it ------------------------------
 * A handle is a struct of one uint64_t, which the x86-64 and AArch64 conventions pass as a
 * bare uint64_t: declared so here, as the package's ctypes declarations do. */
typedef int32_t status_t;
#define CUBEHIP_SUCCESS 0
#define CUBEHIP_IMPORT_RELEASE_ON_CALLER 1u /* cubehip_buffer_import_flags */
enum { ARG_BUFFER = 1, ARG_I8, ARG_U8, ARG_I16, ARG_U16, ARG_I32, ARG_U32, ARG_I64, ARG_U64, ARG_F32, ARG_F64 };

typedef struct {
	int32_t kind, access;
	union {
		struct {
			uint64_t buffer, offset;
		} buffer;
		int64_t i64;
		uint64_t u64;
		float f32;
		double f64;
		struct {
			void* a;
			uint64_t b;
		} pad; /* the union's widest members (bytes, info) are two words */
	} v;
} cubehip_arg;
_Static_assert(sizeof(cubehip_arg) == 24, "cubehip_arg is 24 bytes");

static status_t (*c_launch)(uint64_t kernel, uint64_t stream, const uint32_t* grid, const cubehip_arg* args, size_t n);
static status_t (*c_device_sync)(uint64_t device, uint64_t stream);
static status_t (*c_buffer_alloc)(uint64_t device, uint64_t stream, uint64_t size, uint64_t* out);
static status_t (*c_buffer_release)(uint64_t buffer);
static status_t (*c_buffer_recycle)(uint64_t buffer, int32_t* kept);
static status_t (*c_buffer_read)(uint64_t buffer, uint64_t stream, uint64_t offset, void* dst, uint64_t size);
static status_t (*c_graph_replay)(uint64_t graph);
static status_t (*c_buffer_sync)(uint64_t buffer);
static status_t (*c_buffer_device_pointer)(uint64_t buffer, uint64_t* ptr);
static status_t (*c_buffer_import_flags)(uint64_t device, uint64_t stream, uint64_t ptr, uint64_t size,
	void (*release)(void*), void* user_data, uint32_t flags, uint64_t* out);
static status_t (*c_stream_wait_native)(uint64_t device, uint64_t stream, uint64_t native_stream);
static status_t (*c_stream_native_handle)(uint64_t device, uint64_t stream, uint64_t* out);
static status_t (*c_buffer_order_before)(uint64_t buffer, uint64_t native_stream);

/* ---- small helpers ----------------------------------------------------------------------- */

static PyObject* status_of(status_t st) { return PyLong_FromLong((long)st); }

/* args[i] as a uint64 into *out; 0 with TypeError or OverflowError set. */
static int u64_arg(PyObject* const* args, Py_ssize_t i, uint64_t* out) {
	unsigned long long v = PyLong_AsUnsignedLongLong(args[i]);
	if (v == (unsigned long long)-1 && PyErr_Occurred()) return 0;
	*out = (uint64_t)v;
	return 1;
}

/* nargs ints into v; TypeError for a wrong count. */
static int u64_args(const char* name, PyObject* const* args, Py_ssize_t nargs, Py_ssize_t want, uint64_t* v) {
	if (nargs != want) {
		PyErr_Format(PyExc_TypeError, "%s takes %d arguments (%d given)", name, (int)want, (int)nargs);
		return 0;
	}
	for (Py_ssize_t i = 0; i < nargs; i++)
		if (!u64_arg(args, i, &v[i])) return 0;
	return 1;
}

static int bound(void) {
	if (c_launch != NULL) return 1;
	PyErr_SetString(PyExc_RuntimeError, "cubehip._native: bind(library_path) was not called");
	return 0;
}

/* ---- the hot calls --------------------------------------------------------------------------
 * Every call but the launch gives the GIL up around the library call, as ctypes does: it may
 * wait (a sync, a read, an allocation that grows a pool) and other threads must run then. */

/* launch(kernel, stream, grid_address, args_address, count) -> status */
static PyObject* n_launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[5];
	if (!u64_args("launch", args, nargs, 5, v) || !bound()) return NULL;
	/* The GIL is kept: a launch hands the work to the launch queue and returns sooner than
	 * giving the lock up and taking it back takes; it waits only while that queue is full,
	 * for the driver, never for Python. */
	return status_of(c_launch(v[0], v[1], (const uint32_t*)(uintptr_t)v[2], (const cubehip_arg*)(uintptr_t)v[3], (size_t)v[4]));
}

/* device_sync(device, stream) -> status */
static PyObject* n_device_sync(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[2];
	if (!u64_args("device_sync", args, nargs, 2, v) || !bound()) return NULL;
	status_t st;
	Py_BEGIN_ALLOW_THREADS
	st = c_device_sync(v[0], v[1]);
	Py_END_ALLOW_THREADS
	return status_of(st);
}

/* buffer_alloc(device, stream, size) -> the handle (> 0), or minus the status: a handle's
 * top bit is clear (its kind is in the top byte), so the sign tells them apart. */
static PyObject* n_buffer_alloc(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[3], b = 0;
	if (!u64_args("buffer_alloc", args, nargs, 3, v) || !bound()) return NULL;
	status_t st;
	Py_BEGIN_ALLOW_THREADS
	st = c_buffer_alloc(v[0], v[1], v[2], &b);
	Py_END_ALLOW_THREADS
	if (st != CUBEHIP_SUCCESS) return PyLong_FromLong(-(long)st);
	return PyLong_FromUnsignedLongLong(b);
}

/* buffer_release(buffer) -> status */
static PyObject* n_buffer_release(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[1];
	if (!u64_args("buffer_release", args, nargs, 1, v) || !bound()) return NULL;
	status_t st;
	Py_BEGIN_ALLOW_THREADS
	st = c_buffer_release(v[0]);
	Py_END_ALLOW_THREADS
	return status_of(st);
}

/* buffer_recycle(buffer) -> 1 kept, 0 released, or minus the status */
static PyObject* n_buffer_recycle(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[1];
	if (!u64_args("buffer_recycle", args, nargs, 1, v) || !bound()) return NULL;
	int32_t kept = 0;
	status_t st;
	Py_BEGIN_ALLOW_THREADS
	st = c_buffer_recycle(v[0], &kept);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(st != CUBEHIP_SUCCESS ? -(long)st : (long)kept);
}

/* buffer_read(buffer, stream, offset, dst_address, size) -> status */
static PyObject* n_buffer_read(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[5];
	if (!u64_args("buffer_read", args, nargs, 5, v) || !bound()) return NULL;
	status_t st;
	Py_BEGIN_ALLOW_THREADS
	st = c_buffer_read(v[0], v[1], v[2], (void*)(uintptr_t)v[3], v[4]);
	Py_END_ALLOW_THREADS
	return status_of(st);
}

/* graph_replay(graph) -> status */
static PyObject* n_graph_replay(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[1];
	if (!u64_args("graph_replay", args, nargs, 1, v) || !bound()) return NULL;
	status_t st;
	Py_BEGIN_ALLOW_THREADS
	st = c_graph_replay(v[0]);
	Py_END_ALLOW_THREADS
	return status_of(st);
}

/* stream_native_handle(device, stream) -> the native handle (>= 0), or minus the status */
static PyObject* n_stream_native_handle(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[2], h = 0;
	if (!u64_args("stream_native_handle", args, nargs, 2, v) || !bound()) return NULL;
	status_t st = c_stream_native_handle(v[0], v[1], &h);
	if (st != CUBEHIP_SUCCESS) return PyLong_FromLong(-(long)st);
	return PyLong_FromUnsignedLongLong(h);
}

/* ---- a kernel's call and a device's sync, as built-in functions of their own -------------
 *
 * The calls above still leave a Python frame on the path of `k(grid, x, y)` and `dev.sync()`:
 * the package's code that checks and packs the arguments, about a microsecond a launch and
 * sync on a slow interpreter. kernel_launcher and device_syncer make, for one kernel or one
 * device, a built-in function that is that call; the package installs it where Python
 * finds `k(...)` and `dev.sync` (a built-in function is not a descriptor, so it is called
 * without the kernel or device: its plan names them). It takes the common case: a grid of
 * ints, each argument exactly of its parameter's type (a DeviceArray of a dtype its pointer
 * takes for a buffer, an int in range, a float), the default stream or an int stream id.
 * Every other call, and every call the library refuses, goes to the package's Python
 * function (`slow`), which checks, converts and raises as the package always has. */

#define LAUNCH_PLAN "cubehip._native.launch_plan"
#define SYNC_PLAN "cubehip._native.sync_plan"
#define LAUNCH_MAX_ARGS 64 /* more than this, and the package keeps its Python call */

static PyObject* name_h;       /* "_h", interned */
static PyObject* name_exports; /* "_exports", interned: an array's lease (see export_of) */
static PyObject* name_dtype;   /* "dtype", interned */

/* Every plan starts with the PLAN_REFS references it holds (NULL where it holds fewer),
 * which it drops when freed. */
#define PLAN_REFS 5
#define ELEM_DTYPES 4 /* the most dtype objects one pointer parameter is taken with in C */
typedef struct {
	PyObject* array_type;  /* a buffer argument's exact type: DeviceArray */
	PyObject* slow;        /* the package's launch: slow(grid, *args, stream=...) */
	PyObject* int_types;   /* numpy's integer scalar types, a tuple */
	PyObject* float_types; /* numpy's float32 and float64, a tuple */
	PyObject* dtypes;      /* per parameter, None or a tuple of dtypes: it owns elem's objects */
	uint64_t kernel;
	size_t n;
	uint8_t kinds[LAUNCH_MAX_ARGS];
	/* The dtype objects an array for pointer parameter i is taken with, compared by
	 * identity (numpy's builtin dtypes are one object each): a pointer comparison, where
	 * comparing dtypes by value would call into numpy on every launch. nelem[i] is 0 for a
	 * parameter that takes any array. An array of another dtype object goes to the package's
	 * call, which takes it (an equal dtype made another way) or raises naming the parameter. */
	uint8_t nelem[LAUNCH_MAX_ARGS];
	PyObject* elem[LAUNCH_MAX_ARGS][ELEM_DTYPES];
} launch_plan;

typedef struct {
	PyObject* slow;   /* the package's sync: slow(*args, **kwargs) */
	PyObject* failed; /* failed(status): raises the status's error */
	PyObject* unused[PLAN_REFS - 2];
	uint64_t device;
} sync_plan;

static void plan_free_refs(PyObject** held) {
	for (int i = 0; i < PLAN_REFS; i++) Py_XDECREF(held[i]);
}

static void plan_free(PyObject* capsule) {
	PyObject** held = PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
	if (held == NULL) {
		PyErr_Clear();
		return;
	}
	plan_free_refs(held);
	PyMem_Free(held);
}

/* A built-in function of def whose self is a capsule named name holding plan, which takes
 * references to the n objects in refs. NULL with an exception set when it cannot (plan
 * freed then). */
static PyObject* with_plan(PyMethodDef* def, const char* name, void* plan, PyObject* const* refs, int n) {
	PyObject** held = plan;
	for (int i = 0; i < n; i++) {
		Py_INCREF(refs[i]);
		held[i] = refs[i];
	}
	PyObject* capsule = PyCapsule_New(plan, name, plan_free);
	if (capsule == NULL) {
		plan_free_refs(held);
		PyMem_Free(plan);
		return NULL;
	}
	PyObject* f = PyCFunction_NewEx(def, capsule, NULL);
	Py_DECREF(capsule); /* the function holds it, or is NULL and it goes */
	return f;
}

/* An exact int in [lo, hi] into *out; 0 for anything else, with no exception left set. */
static int int_in(PyObject* o, long long lo, long long hi, long long* out) {
	if (!PyLong_CheckExact(o)) return 0;
	int overflow = 0;
	long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
	if (overflow || (v == -1 && PyErr_Occurred())) {
		PyErr_Clear();
		return 0;
	}
	if (v < lo || v > hi) return 0;
	*out = v;
	return 1;
}

/* An exact int in [0, 2**64) into *out; 0 for anything else, with no exception left set. */
static int u64_in(PyObject* o, uint64_t* out) {
	if (!PyLong_CheckExact(o)) return 0;
	unsigned long long v = PyLong_AsUnsignedLongLong(o);
	if (v == (unsigned long long)-1 && PyErr_Occurred()) {
		PyErr_Clear();
		return 0;
	}
	*out = (uint64_t)v;
	return 1;
}

/* The grid for an int or a tuple of one to three ints each in [1, 2**32); 0 for anything
 * else (lists, numpy ints, out of range: the package checks those and raises for bad ones). */
static int grid_of(PyObject* g, uint32_t grid[3]) {
	long long v;
	grid[0] = grid[1] = grid[2] = 1;
	if (PyLong_CheckExact(g)) {
		if (!int_in(g, 1, 0xffffffffLL, &v)) return 0;
		grid[0] = (uint32_t)v;
		return 1;
	}
	if (!PyTuple_CheckExact(g)) return 0;
	Py_ssize_t n = PyTuple_Size(g);
	if (n < 1 || n > 3) return 0;
	for (Py_ssize_t i = 0; i < n; i++) {
		if (!int_in(PyTuple_GetItem(g, i), 1, 0xffffffffLL, &v)) return 0;
		grid[i] = (uint32_t)v;
	}
	return 1;
}

static int type_in(PyObject* o, PyObject* types) {
	PyObject* t = (PyObject*)Py_TYPE(o);
	Py_ssize_t n = PyTuple_Size(types);
	for (Py_ssize_t i = 0; i < n; i++)
		if (PyTuple_GetItem(types, i) == t) return 1;
	return 0;
}

/* One argument, parameter i of kind kind, into a; 0 when the value is not exactly its type.
 * A numpy scalar (CuPy's way to pass one) of an integer type for an integer parameter, or of
 * float32 or float64 for a float one, is taken as its value, range-checked as an int or
 * float is: what the package's own call does with it. */
static int pack(const launch_plan* p, size_t i, uint8_t kind, PyObject* o, cubehip_arg* a) {
	if (kind >= ARG_I8 && kind <= ARG_U64 && !PyLong_CheckExact(o) && type_in(o, p->int_types)) {
		PyObject* v = PyNumber_Index(o);
		if (v == NULL) {
			PyErr_Clear();
			return 0;
		}
		int ok = pack(p, i, kind, v, a);
		Py_DECREF(v);
		return ok;
	}
	if ((kind == ARG_F32 || kind == ARG_F64) && !PyFloat_CheckExact(o) && type_in(o, p->float_types)) {
		double d = PyFloat_AsDouble(o);
		if (d == -1.0 && PyErr_Occurred()) {
			PyErr_Clear();
			return 0;
		}
		PyObject* v = PyFloat_FromDouble(d);
		if (v == NULL) {
			PyErr_Clear();
			return 0;
		}
		int ok = pack(p, i, kind, v, a);
		Py_DECREF(v);
		return ok;
	}
	long long v;
	a->kind = kind;
	a->access = 0;
	switch (kind) {
	case ARG_BUFFER: {
		if ((PyObject*)Py_TYPE(o) != p->array_type) return 0;
		if (p->nelem[i]) {
			/* A kernel reading float64 bits as float32 computes garbage without a word. */
			PyObject* dt = PyObject_GetAttr(o, name_dtype);
			if (dt == NULL) {
				PyErr_Clear();
				return 0;
			}
			int taken = 0;
			for (int k = 0; k < p->nelem[i]; k++) taken |= p->elem[i][k] == dt;
			Py_DECREF(dt); /* only its identity is kept: the plan holds the ones compared with */
			if (!taken) return 0;
		}
		PyObject* h = PyObject_GetAttr(o, name_h);
		if (h == NULL) {
			PyErr_Clear();
			return 0;
		}
		uint64_t id = 0;
		int ok = u64_in(h, &id);
		Py_DECREF(h);
		if (!ok || id == 0) return 0; /* a released array: the package raises */
		a->v.buffer.buffer = id;
		a->v.buffer.offset = 0;
		return 1;
	}
	case ARG_I8: if (!int_in(o, INT8_MIN, INT8_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case ARG_U8: if (!int_in(o, 0, UINT8_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case ARG_I16: if (!int_in(o, INT16_MIN, INT16_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case ARG_U16: if (!int_in(o, 0, UINT16_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case ARG_I32: if (!int_in(o, INT32_MIN, INT32_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case ARG_U32: if (!int_in(o, 0, UINT32_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case ARG_I64: if (!int_in(o, INT64_MIN, INT64_MAX, &v)) return 0; a->v.i64 = v; return 1;
	case ARG_U64: return u64_in(o, &a->v.u64);
	case ARG_F32: {
		if (!PyFloat_CheckExact(o)) return 0;
		double d = PyFloat_AsDouble(o);
		float f = (float)d;
		/* A finite double beyond float's range would arrive as infinity: the package's own
		 * call refuses it (OverflowError naming the parameter). */
		if (__builtin_isinf(f) && !__builtin_isinf(d)) return 0;
		a->v.u64 = 0;
		a->v.f32 = f;
		return 1;
	}
	case ARG_F64:
		if (!PyFloat_CheckExact(o)) return 0;
		a->v.f64 = PyFloat_AsDouble(o);
		return 1;
	}
	return 0;
}

/* slow(*args, **kwargs) (slow(first, *args, **kwargs) with first) from a vectorcall's arguments. The stable ABI of 3.10 has no
 * PyObject_Vectorcall, so the tuple and dict are built: this is the path of the calls the
 * built-in one does not take, which the package's Python code then checks and converts. */
static PyObject* hand_on_self(PyObject* slow, PyObject* first, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
	Py_ssize_t at = first != NULL;
	PyObject* t = PyTuple_New(at + nargs);
	if (t == NULL) return NULL;
	if (first != NULL) {
		Py_INCREF(first);
		PyTuple_SetItem(t, 0, first);
	}
	for (Py_ssize_t i = 0; i < nargs; i++) {
		Py_INCREF(args[i]);
		PyTuple_SetItem(t, at + i, args[i]); /* steals the new reference */
	}
	PyObject* kw = NULL;
	if (kwnames != NULL) {
		Py_ssize_t nk = PyTuple_Size(kwnames);
		kw = PyDict_New();
		if (kw == NULL) {
			Py_DECREF(t);
			return NULL;
		}
		for (Py_ssize_t i = 0; i < nk; i++)
			if (PyDict_SetItem(kw, PyTuple_GetItem(kwnames, i), args[nargs + i]) != 0) {
				Py_DECREF(kw);
				Py_DECREF(t);
				return NULL;
			}
	}
	PyObject* r = PyObject_Call(slow, t, kw);
	Py_XDECREF(kw);
	Py_DECREF(t);
	return r;
}

static PyObject* hand_on(PyObject* slow, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
	return hand_on_self(slow, NULL, args, nargs, kwnames);
}

/* The kernel's call: k(grid, *args, stream=None). */
static PyObject* kernel_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
	const launch_plan* p = PyCapsule_GetPointer(self, LAUNCH_PLAN);
	if (p == NULL) return NULL;
	uint64_t stream = 0;
	if (kwnames != NULL) {
		/* One keyword, stream; its value follows the positional arguments. */
		if (PyTuple_Size(kwnames) != 1) goto slow;
		PyObject* k = PyTuple_GetItem(kwnames, 0);
		if (PyUnicode_CompareWithASCIIString(k, "stream") != 0) goto slow;
		PyObject* v = args[nargs];
		if (v != Py_None && !u64_in(v, &stream)) goto slow;
	}
	if ((size_t)nargs != p->n + 1) goto slow;
	uint32_t grid[3];
	if (!grid_of(args[0], grid)) goto slow;
	cubehip_arg packed[LAUNCH_MAX_ARGS];
	for (size_t i = 0; i < p->n; i++)
		if (!pack(p, i, p->kinds[i], args[1 + i], &packed[i])) goto slow;
	/* The GIL is kept, as n_launch says why. */
	if (c_launch(p->kernel, stream, grid, packed, p->n) == CUBEHIP_SUCCESS) Py_RETURN_NONE;
	/* Refused, so nothing was queued: the package's call makes it again, and raises. */
slow:
	return hand_on(p->slow, args, nargs, kwnames);
}

/* The device's sync: dev.sync(), the default stream. */
static PyObject* device_sync_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
	const sync_plan* p = PyCapsule_GetPointer(self, SYNC_PLAN);
	if (p == NULL) return NULL;
	if (nargs != 0 || kwnames != NULL) return hand_on(p->slow, args, nargs, kwnames);
	status_t st;
	Py_BEGIN_ALLOW_THREADS
	st = c_device_sync(p->device, 0);
	Py_END_ALLOW_THREADS
	if (st == CUBEHIP_SUCCESS) Py_RETURN_NONE;
	/* Not made again: a failed wait reports its failure once. */
	PyObject* code = status_of(st);
	if (code == NULL) return NULL;
	PyObject* r = PyObject_CallFunctionObjArgs(p->failed, code, NULL);
	Py_DECREF(code);
	return r;
}

static PyMethodDef kernel_call_def = {"launch", (PyCFunction)(void (*)(void))kernel_call, METH_FASTCALL | METH_KEYWORDS,
	"k(grid, *args, stream=None): the kernel's launch (cubehip's native fast path)"};
static PyMethodDef device_sync_def = {"sync", (PyCFunction)(void (*)(void))device_sync_call, METH_FASTCALL | METH_KEYWORDS,
	"sync(stream=None): waits for the stream's work (cubehip's native fast path)"};

/* kernel_launcher(kernel, kinds, array_type, slow, int_types, float_types, dtypes) -> the
 * kernel's call; kinds is bytes, one cubehip_arg_kind per parameter (BUFFER and I8..F64
 * only); int_types and float_types are tuples of the numpy scalar types taken as values;
 * dtypes a tuple with, per parameter, None (a scalar, or a pointer that takes any array) or
 * a tuple of at most ELEM_DTYPES dtypes the pointer's arrays are taken with. */
static PyObject* n_kernel_launcher(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t kernel;
	if (nargs != 7) {
		PyErr_Format(PyExc_TypeError, "kernel_launcher takes 7 arguments (%d given)", (int)nargs);
		return NULL;
	}
	if (!u64_arg(args, 0, &kernel) || !bound()) return NULL;
	if (!PyBytes_Check(args[1])) {
		PyErr_SetString(PyExc_TypeError, "kernel_launcher: kinds must be bytes");
		return NULL;
	}
	const char* kinds = PyBytes_AsString(args[1]);
	Py_ssize_t n = PyBytes_Size(args[1]);
	if (kinds == NULL || n < 0) return NULL;
	if (n > LAUNCH_MAX_ARGS) {
		PyErr_Format(PyExc_TypeError, "kernel_launcher: %d parameters, at most %d", (int)n, LAUNCH_MAX_ARGS);
		return NULL;
	}
	for (Py_ssize_t i = 0; i < n; i++)
		if ((uint8_t)kinds[i] < ARG_BUFFER || (uint8_t)kinds[i] > ARG_F64) {
			PyErr_Format(PyExc_TypeError, "kernel_launcher: parameter %d has kind %d", (int)i, (int)(uint8_t)kinds[i]);
			return NULL;
		}
	if (!PyType_Check(args[2]) || !PyCallable_Check(args[3]) || !PyTuple_Check(args[4]) || !PyTuple_Check(args[5])) {
		PyErr_SetString(PyExc_TypeError, "kernel_launcher: array_type must be a type, slow a callable, int_types and float_types tuples");
		return NULL;
	}
	PyObject* dtypes = args[6];
	if (!PyTuple_Check(dtypes) || PyTuple_Size(dtypes) != n) {
		PyErr_SetString(PyExc_TypeError, "kernel_launcher: dtypes must be a tuple with an entry per parameter");
		return NULL;
	}
	launch_plan* p = PyMem_Calloc(1, sizeof *p);
	if (p == NULL) return PyErr_NoMemory();
	p->kernel = kernel;
	p->n = (size_t)n;
	memcpy(p->kinds, kinds, (size_t)n);
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject* d = PyTuple_GetItem(dtypes, i);
		if (d == Py_None) continue;
		Py_ssize_t nd = PyTuple_Check(d) ? PyTuple_Size(d) : -1;
		if (kinds[i] != ARG_BUFFER || nd < 1 || nd > ELEM_DTYPES) {
			PyErr_Format(PyExc_TypeError, "kernel_launcher: dtypes[%d] must be None or, for a buffer, a tuple of 1 to %d dtypes",
				(int)i, ELEM_DTYPES);
			PyMem_Free(p);
			return NULL;
		}
		p->nelem[i] = (uint8_t)nd;
		for (Py_ssize_t k = 0; k < nd; k++) p->elem[i][k] = PyTuple_GetItem(d, k); /* borrowed: p->dtypes holds them */
	}
	return with_plan(&kernel_call_def, LAUNCH_PLAN, p, args + 2, 5);
}

/* device_syncer(device, slow, failed) -> the device's sync. */
static PyObject* n_device_syncer(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t device;
	if (nargs != 3) {
		PyErr_Format(PyExc_TypeError, "device_syncer takes 3 arguments (%d given)", (int)nargs);
		return NULL;
	}
	if (!u64_arg(args, 0, &device) || !bound()) return NULL;
	if (!PyCallable_Check(args[1]) || !PyCallable_Check(args[2])) {
		PyErr_SetString(PyExc_TypeError, "device_syncer: slow and failed must be callables");
		return NULL;
	}
	sync_plan* p = PyMem_Calloc(1, sizeof *p);
	if (p == NULL) return PyErr_NoMemory();
	p->device = device;
	return with_plan(&device_sync_def, SYNC_PLAN, p, args + 1, 2);
}

/* ---- the interpreter's life, for code that runs on threads Python never saw ----------------
 * libcubehip calls an import's release on a thread of its own, which holds no interpreter
 * lock, once the device no longer uses the memory. Once the interpreter shuts down, a
 * thread that takes the lock is ended on the spot (and a thread of the Go runtime must
 * never end that way), so after the package's atexit hook (exiting()) the releases do
 * nothing: the producer's memory goes with the process. */
static atomic_int exiting;

static PyObject* n_exiting(PyObject* self, PyObject* unused) {
	(void)self;
	(void)unused;
	atomic_store(&exiting, 1);
	Py_RETURN_NONE;
}

static int python_alive(void) { return !atomic_load(&exiting) && Py_IsInitialized(); }

/* ---- DLPack (dlpack.h's structs, v1.0) ----------------------------------------------------- */

typedef struct {
	int32_t device_type, device_id;
} DLDevice;
typedef struct {
	uint8_t code, bits;
	uint16_t lanes;
} DLDataType;
typedef struct {
	void* data;
	DLDevice device;
	int32_t ndim;
	DLDataType dtype;
	int64_t* shape;
	int64_t* strides;
	uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
	DLTensor dl_tensor;
	void* manager_ctx;
	void (*deleter)(struct DLManagedTensor*);
} DLManagedTensor;
typedef struct DLManagedTensorVersioned {
	uint32_t major, minor;
	void* manager_ctx;
	void (*deleter)(struct DLManagedTensorVersioned*);
	uint64_t flags;
	DLTensor dl_tensor;
} DLManagedTensorVersioned;
#define DLPACK_FLAG_READ_ONLY 1

/* ---- export: a device array as a "dltensor" capsule ---------------------------------------
 *
 * One exported tensor: the DLManagedTensor, its shape, a reference to the array that owns
 * the memory (the base of a view) and to that array's lease. The lease is the array's count
 * of exports, kept here in C (the array's _exports slot holds it, a capsule made at its
 * first export) so that an export and its deleter touch no Python attribute: the array's
 * release asks export_leave whether the memory is lent, and if so leaves the buffer to the
 * last deleter. Every count is read and written under the GIL. */
typedef struct {
	Py_ssize_t count; /* exports of the memory whose deleter has not run */
	uint64_t pending; /* the buffer the array's release left to the last of them, or 0 */
	/* The device address of buffer handle ptr_of (0: none yet), from the library at an
	 * earlier export of this memory. A live buffer's address never changes, and a handle
	 * names one buffer (a released one's id does not come back while the array holds it),
	 * so a later export of the same handle reuses it, but only after a call that checked
	 * the handle live (the ordering or the wait): an export that orders nothing asks the
	 * library each time. */
	uint64_t ptr_of, ptr;
} lease_t;
#define LEASE "cubehip._native.lease"

typedef struct {
	DLManagedTensor m;
	PyObject* owner;
	PyObject* lease_obj;
	lease_t* lease;
	int64_t shape[];
} export_t;

/* The addresses of the exports whose deleter has not run, a set open-addressed by address
 * (under the GIL), so a consumer that calls the deleter twice frees nothing twice: the
 * second call finds the address gone and reads nothing of the freed struct. A C set and not
 * a Python one: an export and its deleter then make no Python object for the address. */
static void** live_slots;
static size_t live_cap, live_n;

static size_t live_home(const void* p, size_t mask) {
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 17;
	x *= 0x9E3779B97F4A7C15ull;
	x ^= x >> 29;
	return (size_t)x & mask;
}

/* 0, or -1 with MemoryError set. */
static int live_add(void* p) {
	if ((live_n + 1) * 2 > live_cap) {
		size_t cap = live_cap ? live_cap * 2 : 64;
		void** s = calloc(cap, sizeof *s);
		if (s == NULL) {
			PyErr_NoMemory();
			return -1;
		}
		for (size_t i = 0; i < live_cap; i++) {
			if (live_slots[i] == NULL) continue;
			size_t j = live_home(live_slots[i], cap - 1);
			while (s[j] != NULL) j = (j + 1) & (cap - 1);
			s[j] = live_slots[i];
		}
		free(live_slots);
		live_slots = s;
		live_cap = cap;
	}
	size_t mask = live_cap - 1, j = live_home(p, mask);
	while (live_slots[j] != NULL) j = (j + 1) & mask;
	live_slots[j] = p;
	live_n++;
	return 0;
}

/* 1 when p was live (and is not now), 0 when it was not. */
static int live_remove(const void* p) {
	if (live_cap == 0) return 0;
	size_t mask = live_cap - 1, j = live_home(p, mask);
	while (live_slots[j] != p) {
		if (live_slots[j] == NULL) return 0;
		j = (j + 1) & mask;
	}
	live_slots[j] = NULL;
	live_n--;
	/* Linear probing's deletion: an entry further along the run whose home is not in
	 * (j, k] moves into the hole, so no run is cut short and no marker is left behind. */
	for (size_t k = (j + 1) & mask; live_slots[k] != NULL; k = (k + 1) & mask) {
		size_t h = live_home(live_slots[k], mask);
		int stays = j < k ? (h > j && h <= k) : (h > j || h <= k);
		if (!stays) {
			live_slots[j] = live_slots[k];
			live_slots[k] = NULL;
			j = k;
		}
	}
	return 1;
}

static void lease_free(PyObject* capsule) {
	void* p = PyCapsule_GetPointer(capsule, LEASE);
	if (p == NULL) PyErr_Clear();
	free(p);
}

/* owner's lease (a new reference), made and stored in owner._exports at its first export;
 * NULL with an exception set. */
static PyObject* lease_of(PyObject* owner) {
	PyObject* l = PyObject_GetAttr(owner, name_exports);
	if (l == NULL) return NULL;
	if (PyCapsule_IsValid(l, LEASE)) return l;
	Py_DECREF(l);
	lease_t* p = calloc(1, sizeof *p);
	if (p == NULL) return PyErr_NoMemory();
	l = PyCapsule_New(p, LEASE, lease_free);
	if (l == NULL) {
		free(p);
		return NULL;
	}
	if (PyObject_SetAttr(owner, name_exports, l) != 0) {
		Py_DECREF(l);
		return NULL;
	}
	return l;
}

/* Gives an export back: its count on the lease, and the owner's _export_pending_gone(h)
 * when it was the last one and the array's release left its buffer h to it. Called with the
 * GIL and no exception set. */
static void give_back(export_t* e) {
	lease_t* l = e->lease;
	PyObject* owner = e->owner;
	if (--l->count == 0 && l->pending != 0) {
		uint64_t h = l->pending;
		l->pending = 0;
		PyObject* r = PyObject_CallMethod(owner, "_export_pending_gone", "K", (unsigned long long)h);
		if (r == NULL)
			PyErr_WriteUnraisable(owner);
		else
			Py_DECREF(r);
	}
	Py_DECREF(e->lease_obj);
	Py_DECREF(owner);
	free(e);
}

/* The DLManagedTensor's deleter: called once by the consumer, with or without the GIL, from
 * any thread, often while a Python exception is in flight (a frame unwinding its locals, a
 * consumer that refused the tensor), or by the capsule's destructor when nobody took it.
 * The exception in flight is set aside and put back: Python code (the owner's __del__, when
 * this lets go of its last reference) cannot run while it is set. */
static void export_deleter(DLManagedTensor* m) {
	if (m == NULL || !python_alive()) return;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *type, *value, *tb;
	PyErr_Fetch(&type, &value, &tb);
	if (live_remove(m)) give_back((export_t*)m);
	PyErr_Restore(type, value, tb);
	PyGILState_Release(g);
}

/* The capsule's destructor. A consumer that took the tensor renamed the capsule
 * "used_dltensor" and owns the deleter call; a capsule still named "dltensor" was never
 * consumed and gives the tensor back itself. */
static void export_capsule_destructor(PyObject* capsule) {
	if (!PyCapsule_IsValid(capsule, "dltensor")) return;
	PyObject *type, *value, *tb;
	PyErr_Fetch(&type, &value, &tb);
	DLManagedTensor* m = PyCapsule_GetPointer(capsule, "dltensor");
	if (m != NULL && m->deleter != NULL) m->deleter(m);
	PyErr_Clear();
	PyErr_Restore(type, value, tb);
}

/* The export, both callers': the order, the device pointer, the tensor, its capsule and the
 * owner's count. Returns the capsule; NULL with an exception set; or NULL with none set and
 * *st the status of the C ABI call that refused (nothing exported then). */
static PyObject* export_of(PyObject* owner, uint64_t buffer, uint64_t order, uint64_t native, long device_type, long device_id,
	PyObject* shape, unsigned code, unsigned bits, status_t* st) {
	Py_ssize_t nd = PyTuple_Size(shape);
	if (nd < 0) return NULL;
	*st = CUBEHIP_SUCCESS;
	if (order == 1) {
		Py_BEGIN_ALLOW_THREADS
		*st = c_buffer_sync(buffer);
		Py_END_ALLOW_THREADS
	} else if (order == 2) {
		*st = c_buffer_order_before(buffer, native);
	}
	if (*st != CUBEHIP_SUCCESS) return NULL;
	PyObject* lease = lease_of(owner);
	if (lease == NULL) return NULL;
	lease_t* l = PyCapsule_GetPointer(lease, LEASE);
	uint64_t ptr = 0;
	if (order != 0 && l->ptr_of == buffer) {
		ptr = l->ptr; /* the call above checked the handle live (lease_t's ptr_of) */
	} else if ((*st = c_buffer_device_pointer(buffer, &ptr)) != CUBEHIP_SUCCESS) {
		Py_DECREF(lease);
		return NULL;
	} else {
		l->ptr_of = buffer;
		l->ptr = ptr;
	}

	export_t* e = calloc(1, sizeof *e + (size_t)(nd > 0 ? nd : 1) * sizeof(int64_t));
	if (e == NULL) {
		Py_DECREF(lease);
		return PyErr_NoMemory();
	}
	for (Py_ssize_t i = 0; i < nd; i++) {
		e->shape[i] = PyLong_AsLongLong(PyTuple_GetItem(shape, i));
		if (e->shape[i] == -1 && PyErr_Occurred()) {
			Py_DECREF(lease);
			free(e);
			return NULL;
		}
	}
	/* strides NULL: C-contiguous, which a device array always is. */
	e->m.dl_tensor = (DLTensor){(void*)(uintptr_t)ptr, {(int32_t)device_type, (int32_t)device_id}, (int32_t)nd,
		{(uint8_t)code, (uint8_t)bits, 1}, e->shape, NULL, 0};
	e->m.manager_ctx = e;
	e->m.deleter = export_deleter;
	if (live_add(e) < 0) {
		Py_DECREF(lease);
		free(e);
		return NULL;
	}
	e->lease_obj = lease; /* the reference lease_of gave */
	e->lease = l;
	e->lease->count++;
	Py_INCREF(owner);
	e->owner = owner;
	PyObject* capsule = PyCapsule_New(&e->m, "dltensor", export_capsule_destructor);
	if (capsule == NULL) {
		PyObject *type, *value, *tb;
		PyErr_Fetch(&type, &value, &tb);
		live_remove(e);
		give_back(e);
		PyErr_Restore(type, value, tb);
	}
	return capsule;
}

/* dlpack_export(owner, buffer, order, native_stream, device_type, device_id, shape, code, bits)
 *   -> a "dltensor" capsule over the buffer's memory, or the status (an int) of a failed call.
 *
 * order: 0 none (the consumer orders itself), 1 a host wait for the buffer's writes
 * (cubehip_buffer_sync), 2 the buffer's writes ordered before native_stream on the device
 * (cubehip_buffer_order_before). The whole export is this one call: the wait or the
 * ordering, the device pointer, the tensor and its capsule, the owner's count. */
static PyObject* n_dlpack_export(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	if (nargs != 9) {
		PyErr_Format(PyExc_TypeError, "dlpack_export takes 9 arguments (%d given)", (int)nargs);
		return NULL;
	}
	PyObject* owner = args[0];
	PyObject* shape = args[6];
	uint64_t buffer, order, native, code, bits;
	long device_type, device_id;
	if (!u64_arg(args, 1, &buffer) || !u64_arg(args, 2, &order) || !u64_arg(args, 3, &native) || !u64_arg(args, 7, &code) ||
	    !u64_arg(args, 8, &bits) || !bound())
		return NULL;
	device_type = PyLong_AsLong(args[4]);
	device_id = PyLong_AsLong(args[5]);
	if (PyErr_Occurred()) return NULL;
	if (!PyTuple_Check(shape)) {
		PyErr_SetString(PyExc_TypeError, "dlpack_export: shape must be a tuple");
		return NULL;
	}
	status_t st;
	PyObject* capsule = export_of(owner, buffer, order, native, device_type, device_id, shape, (unsigned)code, (unsigned)bits, &st);
	if (capsule == NULL && !PyErr_Occurred()) return status_of(st);
	return capsule;
}

/* export_leave(lease, buffer) -> True when exports of the lease's memory are live: the last
 * of them gives the buffer back (the owner's _export_pending_gone); False otherwise (lease 0:
 * never exported), and the caller gives it back itself. */
static PyObject* n_export_leave(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t h;
	if (nargs != 2) {
		PyErr_Format(PyExc_TypeError, "export_leave takes 2 arguments (%d given)", (int)nargs);
		return NULL;
	}
	if (!u64_arg(args, 1, &h)) return NULL;
	if (!PyCapsule_IsValid(args[0], LEASE)) Py_RETURN_FALSE;
	lease_t* l = PyCapsule_GetPointer(args[0], LEASE);
	if (l == NULL || l->count == 0) Py_RETURN_FALSE;
	l->pending = h;
	Py_RETURN_TRUE;
}

/* export_count(lease) -> the lease's live exports (0 for no lease). */
static PyObject* n_export_count(PyObject* self, PyObject* arg) {
	(void)self;
	if (!PyCapsule_IsValid(arg, LEASE)) return PyLong_FromLong(0);
	lease_t* l = PyCapsule_GetPointer(arg, LEASE);
	return PyLong_FromSsize_t(l != NULL ? l->count : 0);
}

static PyObject* n_live_exports(PyObject* self, PyObject* unused) {
	(void)self;
	(void)unused;
	return PyLong_FromSize_t(live_n);
}

/* ---- __dlpack__ as a method of the extension's ---------------------------------------------
 *
 * DeviceArray.__dlpack__'s common call, `a.__dlpack__(stream=s)` with no copy asked for and
 * no dl_device but the array's own, made here without a Python frame: the same reads of the array and its
 * device the package's method makes, the same table of streams, then export_of. Every other
 * call (a stream the table refuses, copy=True, another dl_device, a released array or a closed
 * device, a value of an unexpected type anywhere) goes to the package's method (dl_slow),
 * which checks and raises as it always has; a call the library refuses raises through the
 * package's dl_refused(status, order). */
static PyObject* dl_array_type; /* DeviceArray */
static PyObject* dl_slow;       /* the package's __dlpack__: slow(self, **kwargs) */
static PyObject* dl_refused;    /* refused(status, order): raises the status's error */
static PyObject* dl_code_bits;  /* code_bits(dtype) -> (code, bits), or raises BufferError */
static PyObject *name_stream, *name_max_version, *name_dl_device, *name_copy;
static PyObject *name_base, *name_device, *name_platform, *name_index, *name_shape; /* and name_dtype, above */
static PyObject *name_dunder_dlpack, *name_import, *name_stream_attr, *name_nbytes; /* dlpack_take's */
static PyObject *version_1_0, *empty_tuple, *zero;

/* (code, bits) of the dtypes seen, by the dtype object (numpy's dtypes of the builtin types
 * are one object each); each entry holds a reference to its dtype. */
#define DL_DTYPES 32
static struct {
	PyObject* dtype;
	uint8_t code, bits;
} dl_dtypes[DL_DTYPES];
static int dl_ndtypes;

/* 1 with the data type, or 0 with an exception set (code_bits's BufferError). */
static int dl_dtype(PyObject* dtype, unsigned* code, unsigned* bits) {
	for (int i = 0; i < dl_ndtypes; i++)
		if (dl_dtypes[i].dtype == dtype) {
			*code = dl_dtypes[i].code;
			*bits = dl_dtypes[i].bits;
			return 1;
		}
	PyObject* r = PyObject_CallFunctionObjArgs(dl_code_bits, dtype, NULL);
	if (r == NULL) return 0;
	long c = -1, b = -1;
	if (PyTuple_Check(r) && PyTuple_Size(r) == 2) {
		c = PyLong_AsLong(PyTuple_GetItem(r, 0));
		b = PyLong_AsLong(PyTuple_GetItem(r, 1));
	}
	Py_DECREF(r);
	if (PyErr_Occurred()) return 0;
	if (c < 0 || c > 255 || b < 0 || b > 255) {
		PyErr_SetString(PyExc_SystemError, "cubehip._native: code_bits did not return (code, bits)");
		return 0;
	}
	*code = (unsigned)c;
	*bits = (unsigned)b;
	if (dl_ndtypes < DL_DTYPES) {
		Py_INCREF(dtype);
		dl_dtypes[dl_ndtypes].dtype = dtype;
		dl_dtypes[dl_ndtypes].code = (uint8_t)c;
		dl_dtypes[dl_ndtypes].bits = (uint8_t)b;
		dl_ndtypes++;
	}
	return 1;
}

static int name_is(PyObject* k, PyObject* name) {
	if (k == name) return 1;
	int r = PyUnicode_Compare(k, name);
	if (r == -1 && PyErr_Occurred()) PyErr_Clear();
	return r == 0;
}

/* o.name as a nonzero u64 into *out; 0 (no exception left set) for anything else. */
static int attr_handle(PyObject* o, PyObject* name, uint64_t* out) {
	PyObject* v = PyObject_GetAttr(o, name);
	if (v == NULL) {
		PyErr_Clear();
		return 0;
	}
	int ok = u64_in(v, out) && *out != 0;
	Py_DECREF(v);
	return ok;
}

/* The DLPack device of a cubehip Device: 1 with *type (1 kDLCPU, 2 kDLCUDA, 10 kDLROCM),
 * *id (the device's index, 0 on the cpu device) and *nvidia set, as the package's
 * DEVICE_TYPES and _dl_index say; 0, with no exception left set, for anything the
 * package's code is to handle (a platform not named here, an index that is no int). */
static int dl_device_of(PyObject* device, long long* type, long long* id, int* nvidia) {
	PyObject* platform = PyObject_GetAttr(device, name_platform);
	if (platform == NULL) {
		PyErr_Clear();
		return 0;
	}
	int ok = 0;
	*id = 0;
	*nvidia = 0;
	if (!PyUnicode_Check(platform)) goto out;
	if (PyUnicode_CompareWithASCIIString(platform, "cpu") == 0) {
		*type = 1;
		ok = 1;
		goto out;
	}
	*nvidia = PyUnicode_CompareWithASCIIString(platform, "nvidia") == 0;
	if (!*nvidia && PyUnicode_CompareWithASCIIString(platform, "amd") != 0) goto out;
	*type = *nvidia ? 2 : 10;
	PyObject* index = PyObject_GetAttr(device, name_index);
	if (index == NULL) {
		PyErr_Clear();
		goto out;
	}
	ok = int_in(index, 0, INT32_MAX, id);
	Py_DECREF(index);
out:
	Py_DECREF(platform);
	return ok;
}

static PyObject* dlpack_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
	PyObject *stream = Py_None, *dl_device = Py_None, *base = NULL, *device = NULL, *shape = NULL, *dtype = NULL,
		 *r = NULL;
	if (nargs != 0 || dl_slow == NULL || (PyObject*)Py_TYPE(self) != dl_array_type || c_launch == NULL) goto slow;
	if (kwnames != NULL) {
		Py_ssize_t nk = PyTuple_Size(kwnames);
		for (Py_ssize_t i = 0; i < nk; i++) {
			PyObject *k = PyTuple_GetItem(kwnames, i), *v = args[nargs + i];
			if (name_is(k, name_stream))
				stream = v;
			else if (name_is(k, name_max_version))
				; /* a legacy "dltensor" is what every version of the protocol takes */
			else if (name_is(k, name_dl_device))
				dl_device = v; /* checked against the array's device below */
			else if (name_is(k, name_copy)) {
				if (v != Py_None && v != Py_False) goto slow;
			} else
				goto slow;
		}
	}
	uint64_t h, dh, bh;
	if (!attr_handle(self, name_h, &h)) goto slow;
	if ((base = PyObject_GetAttr(self, name_base)) == NULL) goto slow_clear;
	if (base != Py_None && ((PyObject*)Py_TYPE(base) != dl_array_type || !attr_handle(base, name_h, &bh))) goto slow;
	if ((device = PyObject_GetAttr(self, name_device)) == NULL) goto slow_clear;
	if (!attr_handle(device, name_h, &dh)) goto slow;
	long long type, id;
	int nvidia;
	if (!dl_device_of(device, &type, &id, &nvidia)) goto slow;
	/* order_for's table (_dlpack.py); what it refuses, the package's method refuses. */
	uint64_t order, native = 0;
	long device_type = (long)type, device_id = (long)id;
	long long s = 0;
	if (stream != Py_None && !int_in(stream, -1, LLONG_MAX, &s)) {
		uint64_t u;
		if (!u64_in(stream, &u)) goto slow;
		s = -2; /* a handle past LLONG_MAX: a stream, not -1, 0, 1 or 2 */
		native = u;
	} else if (stream != Py_None) {
		native = (uint64_t)s;
	}
	if (type == 1) {
		if (stream != Py_None) goto slow;
		order = 1;
	} else {
		if (stream == Py_None) {
			order = 2;
			native = nvidia ? 1 : 0;
		} else if (s == -1) {
			order = 0;
			native = 0;
		} else {
			if (nvidia ? s == 0 : (s == 1 || s == 2)) goto slow;
			order = 2;
		}
	}
	if (dl_device != Py_None) {
		/* The array's own DLPack device, as a tuple of two ints, asks for nothing more;
		 * anything else is the package's to compare or refuse. */
		long long want[2] = {device_type, device_id}, v;
		if (!PyTuple_CheckExact(dl_device) || PyTuple_Size(dl_device) != 2) goto slow;
		for (Py_ssize_t i = 0; i < 2; i++)
			if (!int_in(PyTuple_GetItem(dl_device, i), want[i], want[i], &v)) goto slow;
	}
	if ((shape = PyObject_GetAttr(self, name_shape)) == NULL) goto slow_clear;
	if (!PyTuple_CheckExact(shape)) goto slow;
	if ((dtype = PyObject_GetAttr(self, name_dtype)) == NULL) goto slow_clear;
	unsigned code, bits;
	if (!dl_dtype(dtype, &code, &bits)) goto done;
	status_t st;
	r = export_of(base != Py_None ? base : self, h, order, native, device_type, device_id, shape, code, bits, &st);
	if (r == NULL && !PyErr_Occurred()) {
		PyObject* x = PyObject_CallFunction(dl_refused, "iK", (int)st, (unsigned long long)order);
		Py_XDECREF(x);
		if (x != NULL) PyErr_Format(PyExc_SystemError, "cubehip._native: refused(%d) did not raise", (int)st);
	}
	goto done;
slow_clear:
	PyErr_Clear();
slow:
	r = hand_on_self(dl_slow, self, args, nargs, kwnames);
done:
	Py_XDECREF(base);
	Py_XDECREF(device);
	Py_XDECREF(shape);
	Py_XDECREF(dtype);
	return r;
}

static PyMethodDef dlpack_def = {"__dlpack__", (PyCFunction)(void (*)(void))dlpack_call, METH_FASTCALL | METH_KEYWORDS,
	"__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): the array as a DLPack capsule, without a "
	"copy (cubehip's native fast path of DeviceArray._dlpack_py, whose documentation says what it does)"};

/* __dlpack_device__ as a method of the extension's: the array's (device type, index) from
 * the same reads the package's method makes, without a Python frame. Anything unexpected (a
 * released array, another type, a platform not named here) goes to the package's method
 * (dl_device_slow), which raises or answers as it always has. */
static PyObject* dl_device_slow; /* the package's __dlpack_device__ */

static PyObject* dlpack_device_call(PyObject* self, PyObject* unused) {
	(void)unused;
	PyObject *device = NULL, *r = NULL;
	uint64_t h, dh;
	if (dl_device_slow == NULL || (PyObject*)Py_TYPE(self) != dl_array_type || !attr_handle(self, name_h, &h)) goto slow;
	if ((device = PyObject_GetAttr(self, name_device)) == NULL) goto slow_clear;
	if (!attr_handle(device, name_h, &dh)) goto slow;
	long long type, id;
	int nvidia;
	if (!dl_device_of(device, &type, &id, &nvidia)) goto slow;
	r = Py_BuildValue("(LL)", type, id);
	goto done;
slow_clear:
	PyErr_Clear();
slow:
	r = dl_device_slow != NULL ? PyObject_CallFunctionObjArgs(dl_device_slow, self, NULL) : NULL;
	if (r == NULL && !PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "cubehip._native: __dlpack_device__ is not bound");
done:
	Py_XDECREF(device);
	return r;
}

static PyMethodDef dlpack_device_def = {"__dlpack_device__", dlpack_device_call, METH_NOARGS,
	"__dlpack_device__(): the DLPack device of the memory (cubehip's native fast path of "
	"DeviceArray._dlpack_device_py, whose documentation says what it returns)"};

/* dlpack_device_method(array_type, slow) -> a method descriptor of array_type for
 * __dlpack_device__ (see above). */
static PyObject* n_dlpack_device_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	if (nargs != 2) {
		PyErr_Format(PyExc_TypeError, "dlpack_device_method takes 2 arguments (%d given)", (int)nargs);
		return NULL;
	}
	if (!PyType_Check(args[0]) || !PyCallable_Check(args[1])) {
		PyErr_SetString(PyExc_TypeError, "dlpack_device_method: array_type must be a type, slow a callable");
		return NULL;
	}
	if (dl_array_type != NULL && dl_array_type != args[0]) {
		PyErr_SetString(PyExc_TypeError, "dlpack_device_method: array_type is not the type dlpack_method was given");
		return NULL;
	}
	PyObject* old = dl_device_slow;
	Py_INCREF(args[1]);
	dl_device_slow = args[1];
	Py_XDECREF(old);
	return PyDescr_NewMethod((PyTypeObject*)args[0], &dlpack_device_def);
}

/* dlpack_method(array_type, slow, refused, code_bits) -> a method descriptor of array_type
 * for __dlpack__ (see above). */
static PyObject* n_dlpack_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	if (nargs != 4) {
		PyErr_Format(PyExc_TypeError, "dlpack_method takes 4 arguments (%d given)", (int)nargs);
		return NULL;
	}
	if (!PyType_Check(args[0]) || !PyCallable_Check(args[1]) || !PyCallable_Check(args[2]) || !PyCallable_Check(args[3])) {
		PyErr_SetString(PyExc_TypeError, "dlpack_method: array_type must be a type, slow, refused and code_bits callables");
		return NULL;
	}
	PyObject** keep[] = {&dl_array_type, &dl_slow, &dl_refused, &dl_code_bits};
	for (int i = 0; i < 4; i++) {
		PyObject* old = *keep[i];
		Py_INCREF(args[i]);
		*keep[i] = args[i];
		Py_XDECREF(old);
	}
	return PyDescr_NewMethod((PyTypeObject*)args[0], &dlpack_def);
}

/* ---- import: another library's tensor as a cubehip buffer ---------------------------------
 *
 * The releases cubehip_buffer_import calls once the device no longer uses the memory: they
 * take the interpreter lock, let go of the producer's tensor or object, and give the lock
 * back. The imports ask for CUBEHIP_IMPORT_RELEASE_ON_CALLER: where the memory is already
 * unused when the array is let go, the release runs on the thread letting go, which holds
 * the interpreter lock already (PyGILState_Ensure is then a count), instead of a thread
 * of libcubehip's that would wait for the lock and take it from the interpreter. */

/* user_data: the producer's DLManagedTensor, or its DLManagedTensorVersioned with the lowest
 * bit set (both are pointer-aligned), whose deleter is called once. */
static void release_dltensor(void* user_data) {
	if (user_data == NULL || !python_alive()) return;
	PyGILState_STATE g = PyGILState_Ensure();
	uintptr_t p = (uintptr_t)user_data;
	if (p & 1) {
		DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)(p & ~(uintptr_t)1);
		if (m->deleter != NULL) m->deleter(m);
	} else {
		DLManagedTensor* m = (DLManagedTensor*)p;
		if (m->deleter != NULL) m->deleter(m);
	}
	PyGILState_Release(g);
}

/* user_data: a reference to the object that owns the memory (a __cuda_array_interface__
 * producer), given back here. */
static void release_object(void* user_data) {
	if (user_data == NULL || !python_alive()) return;
	PyGILState_STATE g = PyGILState_Ensure();
	Py_DECREF((PyObject*)user_data);
	PyGILState_Release(g);
}

/* A refusal, for the package to word: (None, what, details...). */
static PyObject* refusal(const char* what, PyObject* detail) {
	if (detail == NULL) return NULL;
	PyObject* r = Py_BuildValue("(OsO)", Py_None, what, detail);
	Py_DECREF(detail);
	return r;
}

static PyObject* int64_tuple(const int64_t* v, int32_t n) {
	PyObject* t = PyTuple_New(n);
	if (t == NULL) return NULL;
	for (int32_t i = 0; i < n; i++) {
		PyObject* x = PyLong_FromLongLong(v[i]);
		if (x == NULL) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SetItem(t, i, x);
	}
	return t;
}

/* dlpack_import(capsule, want_type, want_id, device, stream, wait)
 *   -> (handle, shape, typestr): the tensor imported as a buffer of device (handle 0 for an
 *      empty tensor, which shares no memory and leaves the capsule to its destructor);
 *   -> (None, what, detail): a tensor cubehip cannot use in place, the capsule untouched:
 *      "capsule" (not an unconsumed DLPack capsule), "version" ((major, minor)), "readonly",
 *      "device" ((type, id)), "dtype" ((code, bits, lanes)), "strides" ((shape, strides));
 *   -> an int: the status of a refused cubehip_buffer_import.
 * want_id -1 takes any device index (kDLCPU's). On success the capsule is renamed
 * "used_dltensor[_versioned]": the buffer's release calls the tensor's deleter, once.
 * wait, when not -1, is the native stream the producer ordered its work before: the
 * stream waits for it on the device (cubehip_stream_wait_native) before the import; a
 * refused wait is returned as a refused import is, the capsule untouched. */
static PyObject* n_dlpack_import(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	if (nargs != 6) {
		PyErr_Format(PyExc_TypeError, "dlpack_import takes 6 arguments (%d given)", (int)nargs);
		return NULL;
	}
	PyObject* cap = args[0];
	long want_type = PyLong_AsLong(args[1]), want_id = PyLong_AsLong(args[2]);
	long long wait = PyLong_AsLongLong(args[5]);
	if (PyErr_Occurred()) return NULL;
	uint64_t device, stream;
	if (!u64_arg(args, 3, &device) || !u64_arg(args, 4, &stream) || !bound()) return NULL;

	DLTensor* t;
	void* user_data;
	const char* used;
	if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
		DLManagedTensorVersioned* m = PyCapsule_GetPointer(cap, "dltensor_versioned");
		if (m == NULL) return NULL;
		if (m->major != 1) return refusal("version", Py_BuildValue("(II)", m->major, m->minor));
		if (m->flags & DLPACK_FLAG_READ_ONLY) return refusal("readonly", (Py_INCREF(Py_None), Py_None));
		t = &m->dl_tensor;
		user_data = (void*)((uintptr_t)m | 1);
		used = "used_dltensor_versioned";
	} else if (PyCapsule_IsValid(cap, "dltensor")) {
		DLManagedTensor* m = PyCapsule_GetPointer(cap, "dltensor");
		if (m == NULL) return NULL;
		t = &m->dl_tensor;
		user_data = m;
		used = "used_dltensor";
	} else {
		return refusal("capsule", (Py_INCREF(Py_None), Py_None));
	}
	if (t->device.device_type != want_type || (want_id >= 0 && t->device.device_id != want_id))
		return refusal("device", Py_BuildValue("(ii)", t->device.device_type, t->device.device_id));
	/* DLDataTypeCode -> numpy's kind letter (int, uint, float, complex, bool), and the sizes
	 * numpy has a dtype of for it: checked before the import, which nothing undoes. */
	static const char kinds[] = {[0] = 'i', [1] = 'u', [2] = 'f', [5] = 'c', [6] = 'b'};
	DLDataType dt = t->dtype;
	char kind = dt.code < sizeof kinds ? kinds[dt.code] : 0;
	int sized = 0;
	switch (kind) {
	case 'i':
	case 'u': sized = dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64; break;
	case 'f': sized = dt.bits == 16 || dt.bits == 32 || dt.bits == 64; break;
	case 'c': sized = dt.bits == 64 || dt.bits == 128; break;
	case 'b': sized = dt.bits == 8; break;
	}
	if (!sized || dt.lanes != 1) return refusal("dtype", Py_BuildValue("(iii)", dt.code, dt.bits, dt.lanes));
	int32_t nd = t->ndim;
	if (nd < 0 || (nd > 0 && t->shape == NULL)) return refusal("capsule", (Py_INCREF(Py_None), Py_None));
	/* C-contiguous: a dimension of size 1 may have any stride, an empty tensor has no
	 * layout to check. */
	uint64_t count = 1;
	for (int32_t i = 0; i < nd; i++) count *= (uint64_t)t->shape[i];
	if (t->strides != NULL && count != 0) {
		int64_t expect = 1;
		for (int32_t i = nd - 1; i >= 0; i--) {
			if (t->shape[i] != 1 && t->strides[i] != expect) {
				PyObject* s = int64_tuple(t->shape, nd);
				PyObject* st = s != NULL ? int64_tuple(t->strides, nd) : NULL;
				PyObject* d = st != NULL ? PyTuple_Pack(2, s, st) : NULL;
				Py_XDECREF(s);
				Py_XDECREF(st);
				return refusal("strides", d);
			}
			expect *= t->shape[i];
		}
	}
	PyObject* shape = int64_tuple(t->shape, nd);
	if (shape == NULL) return NULL;
	char typestr[8];
	if (kind == 'b')
		snprintf(typestr, sizeof typestr, "?");
	else
		snprintf(typestr, sizeof typestr, "%c%u", kind, (unsigned)(dt.bits / 8));
	uint64_t nbytes = count * (dt.bits / 8);
	uint64_t h = 0;
	if (nbytes != 0) {
		uint64_t ptr = (uint64_t)(uintptr_t)t->data + t->byte_offset;
		status_t st = CUBEHIP_SUCCESS;
		/* The wait first: refused, it leaves nothing to undo (the capsule is untouched). */
		if (wait != -1) st = c_stream_wait_native(device, stream, (uint64_t)wait);
		if (st == CUBEHIP_SUCCESS)
			st = c_buffer_import_flags(device, stream, ptr, nbytes, release_dltensor, user_data,
				CUBEHIP_IMPORT_RELEASE_ON_CALLER, &h);
		if (st != CUBEHIP_SUCCESS) {
			Py_DECREF(shape);
			return status_of(st);
		}
		/* Taken: from now on the release calls the deleter, and the capsule must not. */
		if (PyCapsule_SetName(cap, used) != 0) {
			Py_DECREF(shape);
			return NULL;
		}

	}
	PyObject* r = Py_BuildValue("(KNs)", (unsigned long long)h, shape, typestr);
	return r;
}

/* dlpack_take(x, stream, legacy, want_type, want_id, device, sid, wait, array_type, dev, dtypes)
 *   -> a new array_type over x's memory: from_dlpack's common path past its checks of the
 *      arguments and of x's device, in one call: x's capsule (x.__dlpack__(stream=stream,
 *      max_version=(1, 0)); a type in the set legacy, or one that raises TypeError for
 *      max_version and takes the call without it, is a DLPack < 1.0 producer, asked without
 *      it and remembered in legacy), dlpack_import's import, and the array (_h, _base None,
 *      _exports 0, _import True, device dev, shape, dtype dtypes[typestr], stream sid, nbytes);
 *   -> what dlpack_import returned, for the package to raise or finish: a status, a
 *      refusal, an empty tensor's (0, shape, typestr), or a tensor whose typestr is not in
 *      dtypes yet. */
static PyObject* n_dlpack_take(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	if (nargs != 11) {
		PyErr_Format(PyExc_TypeError, "dlpack_take takes 11 arguments (%d given)", (int)nargs);
		return NULL;
	}
	PyObject *x = args[0], *legacy = args[2], *array_type = args[8], *dtypes = args[10];
	if (!PySet_Check(legacy) || !PyType_Check(array_type) || !PyDict_Check(dtypes)) {
		PyErr_SetString(PyExc_TypeError, "dlpack_take: legacy must be a set, array_type a type, dtypes a dict");
		return NULL;
	}
	PyObject* meth = PyObject_GetAttr(x, name_dunder_dlpack);
	if (meth == NULL) return NULL;
	PyObject* kw = PyDict_New();
	PyObject* cap = NULL;
	int old = kw != NULL && PyDict_SetItem(kw, name_stream, args[1]) == 0 ? PySet_Contains(legacy, (PyObject*)Py_TYPE(x)) : -1;
	if (old == 0 && PyDict_SetItem(kw, name_max_version, version_1_0) == 0) {
		cap = PyObject_Call(meth, empty_tuple, kw);
		if (cap == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
			/* A producer older than DLPack 1.0 knows no max_version (numpy < 2.1). */
			PyErr_Clear();
			if (PyDict_DelItem(kw, name_max_version) == 0) cap = PyObject_Call(meth, empty_tuple, kw);
			if (cap != NULL && PySet_Size(legacy) < 64 && PySet_Add(legacy, (PyObject*)Py_TYPE(x)) != 0) Py_CLEAR(cap);
		}
	} else if (old == 1) {
		cap = PyObject_Call(meth, empty_tuple, kw);
	}
	Py_DECREF(meth);
	Py_XDECREF(kw);
	if (cap == NULL) return NULL;
	PyObject* const iargs[6] = {cap, args[3], args[4], args[5], args[6], args[7]};
	PyObject* r = n_dlpack_import(NULL, iargs, 6);
	Py_DECREF(cap); /* renamed "used_dltensor" when taken: its end calls no deleter */
	if (r == NULL || !PyTuple_Check(r) || PyTuple_Size(r) != 3) return r;
	PyObject *h = PyTuple_GetItem(r, 0), *shape = PyTuple_GetItem(r, 1), *typestr = PyTuple_GetItem(r, 2);
	uint64_t buffer;
	if (h == Py_None || !u64_in(h, &buffer) || buffer == 0) return r;
	PyObject* dtype = PyDict_GetItemWithError(dtypes, typestr);
	if (dtype == NULL) {
		if (PyErr_Occurred()) PyErr_Clear();
		return r;
	}
	/* The buffer's size: typestr is "?" or a kind and a byte count ("f4"), shape all ints. */
	const char* ts = PyUnicode_AsUTF8AndSize(typestr, NULL);
	uint64_t nbytes = ts == NULL ? 0 : ts[0] == '?' ? 1 : (uint64_t)atoi(ts + 1);
	for (Py_ssize_t i = 0, n = PyTuple_Size(shape); i < n; i++) nbytes *= (uint64_t)PyLong_AsUnsignedLongLong(PyTuple_GetItem(shape, i));
	allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject*)array_type, Py_tp_alloc);
	PyObject* a = alloc != NULL && !PyErr_Occurred() ? alloc((PyTypeObject*)array_type, 0) : NULL;
	PyObject* nb = a != NULL ? PyLong_FromUnsignedLongLong(nbytes) : NULL;
	/* _h last: an array without it is one whose end (its __del__) releases nothing, so a
	 * failure before it leaves the release to this call alone. */
	int ok = nb != NULL && PyObject_SetAttr(a, name_base, Py_None) == 0 && PyObject_SetAttr(a, name_exports, zero) == 0 &&
		 PyObject_SetAttr(a, name_import, Py_True) == 0 && PyObject_SetAttr(a, name_device, args[9]) == 0 &&
		 PyObject_SetAttr(a, name_shape, shape) == 0 && PyObject_SetAttr(a, name_dtype, dtype) == 0 &&
		 PyObject_SetAttr(a, name_stream_attr, args[6]) == 0 && PyObject_SetAttr(a, name_nbytes, nb) == 0 &&
		 PyObject_SetAttr(a, name_h, h) == 0;
	Py_XDECREF(nb);
	if (!ok) {
		PyObject *type, *value, *tb;
		PyErr_Fetch(&type, &value, &tb);
		Py_XDECREF(a);
		Py_DECREF(r);
		status_t st;
		Py_BEGIN_ALLOW_THREADS
		st = c_buffer_release(buffer);
		Py_END_ALLOW_THREADS
		(void)st; /* the error in hand is the one to raise */
		PyErr_Restore(type, value, tb);
		if (!PyErr_Occurred()) PyErr_NoMemory();
		return NULL;
	}
	Py_DECREF(r);
	return a;
}

/* ---- DeviceArray.__del__ as a method of the extension's -------------------------------------
 *
 * The package's __del__ (DeviceArray._del_py), made without a Python frame: an array that
 * owns its memory (no base), still holds it (_h) on an open device (its _h) gives it back:
 * an import to the library at once (never kept), any other to the device's KeptBuffers
 * (device._kept.give(h, stream, nbytes or 1)). Like the package's, it raises nothing: a
 * half torn-down interpreter or a closed device is nothing worth an exception nobody can
 * catch. */
static PyObject *name_kept, *name_give;

static PyObject* array_del_call(PyObject* self, PyObject* unused) {
	(void)unused;
	PyObject *base = NULL, *dev = NULL, *imp = NULL, *kept = NULL;
	uint64_t h, dh;
	if ((base = PyObject_GetAttr(self, name_base)) == NULL || base != Py_None) goto out;
	if (!attr_handle(self, name_h, &h)) goto out;
	if ((dev = PyObject_GetAttr(self, name_device)) == NULL || !attr_handle(dev, name_h, &dh)) goto out;
	if ((imp = PyObject_GetAttr(self, name_import)) == NULL) goto out;
	/* No export is live: each holds this array. */
	if (PyObject_SetAttr(self, name_h, zero) != 0) goto out;
	if (imp == Py_True) {
		if (c_buffer_release != NULL) {
			status_t st;
			Py_BEGIN_ALLOW_THREADS
			st = c_buffer_release(h);
			Py_END_ALLOW_THREADS
			(void)st; /* as the package's: a failed release is nothing to raise from __del__ */
		}
	} else if ((kept = PyObject_GetAttr(dev, name_kept)) != NULL) {
		PyObject *stream = PyObject_GetAttr(self, name_stream_attr), *nb = PyObject_GetAttr(self, name_nbytes), *ho = PyLong_FromUnsignedLongLong(h);
		PyObject* n = nb;
		if (nb != NULL && PyLong_Check(nb) && PyObject_Not(nb) == 1) n = PyLong_FromLong(1); /* nbytes or 1 */
		else Py_XINCREF(n);
		if (stream != NULL && n != NULL && ho != NULL) {
			PyObject* r = PyObject_CallMethodObjArgs(kept, name_give, ho, stream, n, NULL);
			Py_XDECREF(r);
		}
		Py_XDECREF(stream);
		Py_XDECREF(nb);
		Py_XDECREF(n);
		Py_XDECREF(ho);
	}
out:
	PyErr_Clear();
	Py_XDECREF(base);
	Py_XDECREF(dev);
	Py_XDECREF(imp);
	Py_XDECREF(kept);
	Py_RETURN_NONE;
}

static PyMethodDef array_del_def = {"__del__", array_del_call, METH_NOARGS,
	"__del__(): gives the array's memory back (cubehip's native fast path of DeviceArray._del_py)"};

/* array_del_method(array_type) -> a method descriptor of array_type for __del__ (see above). */
static PyObject* n_array_del_method(PyObject* self, PyObject* type) {
	(void)self;
	if (!PyType_Check(type)) {
		PyErr_SetString(PyExc_TypeError, "array_del_method: array_type must be a type");
		return NULL;
	}
	return PyDescr_NewMethod((PyTypeObject*)type, &array_del_def);
}

/* ---- from_dlpack as a function of the extension's ------------------------------------------
 *
 * cubehip.from_dlpack's common call, `from_dlpack(x)` or with device= a Device and stream=None
 * or an int id, copy=None or False, made here without a Python frame: the same checks of the
 * arguments and of x's DLPack device the package's function makes, then dlpack_take. Every
 * other call (another argument's type, x a DeviceArray, x on another device, no __dlpack__,
 * a closed device) goes to the package's function (fd_slow), which answers or raises as it
 * always has; a result of dlpack_take that is not an array goes to fd_finish(r, dev, sid),
 * the package's tail of the same function, which raises or finishes it. */
static PyObject *fd_slow, *fd_finish, *fd_get_device, *fd_device_type, *fd_legacy, *fd_dtypes;
static PyObject* name_dunder_dlpack_device; /* "__dlpack_device__", interned */

static PyObject* from_dlpack_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
	(void)self;
	PyObject *device = Py_None, *stream = Py_None, *dev = NULL, *dd = NULL, *r = NULL, *sid = NULL;
	if (nargs != 1 || fd_slow == NULL || dl_array_type == NULL || c_launch == NULL) goto slow;
	if (kwnames != NULL) {
		Py_ssize_t nk = PyTuple_Size(kwnames);
		for (Py_ssize_t i = 0; i < nk; i++) {
			PyObject *k = PyTuple_GetItem(kwnames, i), *v = args[nargs + i];
			if (name_is(k, name_device))
				device = v;
			else if (name_is(k, name_stream))
				stream = v;
			else if (name_is(k, name_copy)) {
				if (v != Py_None && v != Py_False) goto slow;
			} else
				goto slow;
		}
	}
	PyObject* x = args[0];
	if ((PyObject*)Py_TYPE(x) == dl_array_type) goto slow;
	if (stream == Py_None) {
		sid = zero;
		Py_INCREF(sid);
	} else {
		long long v;
		if (!PyLong_CheckExact(stream) || !int_in(stream, 0, LLONG_MAX, &v)) goto slow;
		sid = stream;
		Py_INCREF(sid);
	}
	if (device == Py_None) {
		if ((dev = PyObject_CallFunctionObjArgs(fd_get_device, NULL)) == NULL) goto done;
	} else {
		dev = device;
		Py_INCREF(dev);
	}
	if ((PyObject*)Py_TYPE(dev) != fd_device_type) goto slow;
	uint64_t dh;
	if (!attr_handle(dev, name_h, &dh)) goto slow;
	long long want_type, want_id, wait = -1, legacy = -1;
	int nvidia;
	if (!dl_device_of(dev, &want_type, &want_id, &nvidia)) goto slow;
	if (want_type == 1)
		want_id = -1; /* any: kDLCPU memory is the cpu device's */
	else
		legacy = wait = nvidia ? 1 : 0; /* _LEGACY: the legacy default stream's DLPack handle */
	/* x's DLPack device, as the package's function asks it, before x does any work for us. */
	if ((dd = PyObject_CallMethodObjArgs(x, name_dunder_dlpack_device, NULL)) == NULL) goto slow_clear;
	/* Ints or their subclasses (PyTorch's device type is an IntEnum), not bools. */
	PyObject *gt = PyTuple_Check(dd) && PyTuple_Size(dd) == 2 ? PyTuple_GetItem(dd, 0) : NULL, *gi = gt ? PyTuple_GetItem(dd, 1) : NULL;
	if (gt == NULL || !PyLong_Check(gt) || PyBool_Check(gt) || !PyLong_Check(gi) || PyBool_Check(gi)) goto slow;
	int over = 0;
	long long got_type = PyLong_AsLongLongAndOverflow(gt, &over), got_id = over ? 0 : PyLong_AsLongLongAndOverflow(gi, &over);
	if (PyErr_Occurred()) goto slow_clear;
	if (over || got_type != want_type || (want_id >= 0 && got_id != want_id)) goto slow;
	if (!PyObject_HasAttr(x, name_dunder_dlpack)) goto slow;
	{
		PyObject* legacy_obj = legacy >= 0 ? PyLong_FromLongLong(legacy) : (Py_INCREF(Py_None), Py_None);
		PyObject *wt = PyLong_FromLongLong(want_type), *wi = PyLong_FromLongLong(want_id), *dho = PyLong_FromUnsignedLongLong(dh),
			 *wo = PyLong_FromLongLong(wait);
		if (legacy_obj != NULL && wt != NULL && wi != NULL && dho != NULL && wo != NULL) {
			PyObject* const targs[11] = {x, legacy_obj, fd_legacy, wt, wi, dho, sid, wo, dl_array_type, dev, fd_dtypes};
			r = n_dlpack_take(NULL, targs, 11);
		}
		Py_XDECREF(legacy_obj);
		Py_XDECREF(wt);
		Py_XDECREF(wi);
		Py_XDECREF(dho);
		Py_XDECREF(wo);
		if (r != NULL && (PyObject*)Py_TYPE(r) != dl_array_type) {
			PyObject* f = PyObject_CallFunctionObjArgs(fd_finish, r, dev, sid, NULL);
			Py_DECREF(r);
			r = f;
		}
	}
	goto done;
slow_clear:
	PyErr_Clear();
slow:
	r = fd_slow != NULL ? hand_on_self(fd_slow, NULL, args, nargs, kwnames) : NULL;
done:
	Py_XDECREF(sid);
	Py_XDECREF(dev);
	Py_XDECREF(dd);
	return r;
}

static PyMethodDef from_dlpack_def = {"from_dlpack", (PyCFunction)(void (*)(void))from_dlpack_call, METH_FASTCALL | METH_KEYWORDS, NULL};

/* from_dlpack_function(slow, finish, get_device, device_type, legacy, dtypes) -> from_dlpack
 * (see above), documented with slow's documentation. dlpack_method must have been called. */
static PyObject* n_from_dlpack_function(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	if (nargs != 6) {
		PyErr_Format(PyExc_TypeError, "from_dlpack_function takes 6 arguments (%d given)", (int)nargs);
		return NULL;
	}
	if (!PyCallable_Check(args[0]) || !PyCallable_Check(args[1]) || !PyCallable_Check(args[2]) || !PyType_Check(args[3]) ||
	    !PySet_Check(args[4]) || !PyDict_Check(args[5]) || dl_array_type == NULL) {
		PyErr_SetString(PyExc_TypeError,
			"from_dlpack_function: slow, finish and get_device must be callables, device_type a type, legacy a set, "
			"dtypes a dict, and dlpack_method called first");
		return NULL;
	}
	if (from_dlpack_def.ml_doc == NULL) {
		/* The package's documentation, after the signature line inspect reads. */
		PyObject* doc = PyObject_GetAttrString(args[0], "__doc__");
		const char* text = doc != NULL && PyUnicode_Check(doc) ? PyUnicode_AsUTF8AndSize(doc, NULL) : NULL;
		if (text == NULL) PyErr_Clear();
		const char* sig = "from_dlpack(x, /, *, device=None, stream=None, copy=None)\n--\n\n";
		size_t n = strlen(sig) + (text != NULL ? strlen(text) : 0) + 1;
		char* d = malloc(n); /* kept for the process's life, as the function is */
		if (d == NULL) {
			Py_XDECREF(doc);
			return PyErr_NoMemory();
		}
		snprintf(d, n, "%s%s", sig, text != NULL ? text : "");
		Py_XDECREF(doc);
		from_dlpack_def.ml_doc = d;
	}
	PyObject** keep[] = {&fd_slow, &fd_finish, &fd_get_device, &fd_device_type, &fd_legacy, &fd_dtypes};
	for (int i = 0; i < 6; i++) {
		PyObject* old = *keep[i];
		Py_INCREF(args[i]);
		*keep[i] = args[i];
		Py_XDECREF(old);
	}
	return PyCFunction_NewEx(&from_dlpack_def, NULL, NULL);
}

/* object_import(device, stream, ptr, nbytes, owner) -> the handle, or minus the status: memory
 * that owner keeps alive (a __cuda_array_interface__ producer), which the buffer holds a
 * reference to until the device no longer uses it. */
static PyObject* n_object_import(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	if (nargs != 5) {
		PyErr_Format(PyExc_TypeError, "object_import takes 5 arguments (%d given)", (int)nargs);
		return NULL;
	}
	uint64_t v[4], h = 0;
	for (Py_ssize_t i = 0; i < 4; i++)
		if (!u64_arg(args, i, &v[i])) return NULL;
	if (!bound()) return NULL;
	PyObject* owner = args[4];
	Py_INCREF(owner); /* the release's */
	status_t st = c_buffer_import_flags(v[0], v[1], v[2], v[3], release_object, owner, CUBEHIP_IMPORT_RELEASE_ON_CALLER, &h);
	if (st != CUBEHIP_SUCCESS) {
		Py_DECREF(owner);
		return PyLong_FromLong(-(long)st);
	}
	return PyLong_FromUnsignedLongLong(h);
}

/* ---- bind ----------------------------------------------------------------------------------- */

/* bind(library_path): the functions of the libcubehip already loaded from library_path (by
 * ctypes, with the same path). A library of another version is refused where a function
 * this module needs is missing, naming it. */
static PyObject* n_bind(PyObject* self, PyObject* arg) {
	(void)self;
	PyObject* b = PyUnicode_EncodeFSDefault(arg);
	if (b == NULL) return NULL;
	void* lib = dlopen(PyBytes_AsString(b), RTLD_NOW | RTLD_NOLOAD);
	if (lib == NULL) {
		PyErr_Format(PyExc_ImportError, "cubehip._native: %S is not loaded (%s)", arg, dlerror());
		Py_DECREF(b);
		return NULL;
	}
	Py_DECREF(b);
	/* The handle is kept: the package keeps the library loaded for the process's life. */
	struct {
		const char* name;
		void** fn;
	} want[] = {
		{"cubehip_launch", (void**)&c_launch},
		{"cubehip_device_sync", (void**)&c_device_sync},
		{"cubehip_buffer_alloc", (void**)&c_buffer_alloc},
		{"cubehip_buffer_release", (void**)&c_buffer_release},
		{"cubehip_buffer_recycle", (void**)&c_buffer_recycle},
		{"cubehip_buffer_read", (void**)&c_buffer_read},
		{"cubehip_graph_replay", (void**)&c_graph_replay},
		{"cubehip_buffer_sync", (void**)&c_buffer_sync},
		{"cubehip_buffer_device_pointer", (void**)&c_buffer_device_pointer},
		{"cubehip_buffer_import_flags", (void**)&c_buffer_import_flags},
		{"cubehip_stream_wait_native", (void**)&c_stream_wait_native},
		{"cubehip_stream_native_handle", (void**)&c_stream_native_handle},
		{"cubehip_buffer_order_before", (void**)&c_buffer_order_before},
	};
	void* found[sizeof want / sizeof want[0]];
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		found[i] = dlsym(lib, want[i].name);
		if (found[i] == NULL) {
			PyErr_Format(PyExc_ImportError, "cubehip._native: %S has no %s", arg, want[i].name);
			return NULL;
		}
	}
	/* All or nothing: c_launch, set last, is what bound() tests. */
	for (size_t i = sizeof want / sizeof want[0]; i-- > 0;) *want[i].fn = found[i];
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{"bind", n_bind, METH_O, "bind(library_path): use the libcubehip loaded from that path"},
	{"launch", (PyCFunction)(void (*)(void))n_launch, METH_FASTCALL, "launch(kernel, stream, grid_address, args_address, count) -> status"},
	{"device_sync", (PyCFunction)(void (*)(void))n_device_sync, METH_FASTCALL, "device_sync(device, stream) -> status"},
	{"buffer_alloc", (PyCFunction)(void (*)(void))n_buffer_alloc, METH_FASTCALL, "buffer_alloc(device, stream, size) -> handle, or -status"},
	{"buffer_release", (PyCFunction)(void (*)(void))n_buffer_release, METH_FASTCALL, "buffer_release(buffer) -> status"},
	{"buffer_recycle", (PyCFunction)(void (*)(void))n_buffer_recycle, METH_FASTCALL, "buffer_recycle(buffer) -> 1 kept, 0 released, or -status"},
	{"buffer_read", (PyCFunction)(void (*)(void))n_buffer_read, METH_FASTCALL, "buffer_read(buffer, stream, offset, dst_address, size) -> status"},
	{"graph_replay", (PyCFunction)(void (*)(void))n_graph_replay, METH_FASTCALL, "graph_replay(graph) -> status"},
	{"stream_native_handle", (PyCFunction)(void (*)(void))n_stream_native_handle, METH_FASTCALL,
		"stream_native_handle(device, stream) -> handle, or -status"},
	{"kernel_launcher", (PyCFunction)(void (*)(void))n_kernel_launcher, METH_FASTCALL,
		"kernel_launcher(kernel, kinds, array_type, slow, int_types, float_types, dtypes) -> the kernel's call"},
	{"device_syncer", (PyCFunction)(void (*)(void))n_device_syncer, METH_FASTCALL, "device_syncer(device, slow, failed) -> the device's sync"},
	{"dlpack_export", (PyCFunction)(void (*)(void))n_dlpack_export, METH_FASTCALL,
		"dlpack_export(owner, buffer, order, native_stream, device_type, device_id, shape, code, bits) -> capsule, or status"},
	{"dlpack_import", (PyCFunction)(void (*)(void))n_dlpack_import, METH_FASTCALL,
		"dlpack_import(capsule, want_type, want_id, device, stream) -> (handle, shape, typestr), (None, what, detail), or status"},
	{"dlpack_take", (PyCFunction)(void (*)(void))n_dlpack_take, METH_FASTCALL,
		"dlpack_take(x, stream, legacy, want_type, want_id, device, sid, wait, array_type, dev, dtypes) -> the array, or dlpack_import's answer"},
	{"object_import", (PyCFunction)(void (*)(void))n_object_import, METH_FASTCALL,
		"object_import(device, stream, ptr, nbytes, owner) -> handle, or -status"},
	{"export_leave", (PyCFunction)(void (*)(void))n_export_leave, METH_FASTCALL,
		"export_leave(lease, buffer) -> True when live exports of the lease's memory give the buffer back, else False"},
	{"export_count", n_export_count, METH_O, "export_count(lease) -> the live exports of the lease's memory"},
	{"dlpack_method", (PyCFunction)(void (*)(void))n_dlpack_method, METH_FASTCALL,
		"dlpack_method(array_type, slow, refused, code_bits) -> DeviceArray.__dlpack__'s native method"},
	{"array_del_method", n_array_del_method, METH_O, "array_del_method(array_type) -> DeviceArray.__del__ without a Python frame"},
	{"from_dlpack_function", (PyCFunction)(void (*)(void))n_from_dlpack_function, METH_FASTCALL,
		"from_dlpack_function(slow, finish, get_device, device_type, legacy, dtypes) -> cubehip.from_dlpack without a Python frame"},
	{"dlpack_device_method", (PyCFunction)(void (*)(void))n_dlpack_device_method, METH_FASTCALL,
		"dlpack_device_method(array_type, slow) -> DeviceArray.__dlpack_device__ without a Python frame"},
	{"live_exports", n_live_exports, METH_NOARGS, "live_exports() -> exported tensors whose deleter has not run"},
	{"exiting", n_exiting, METH_NOARGS, "exiting(): the interpreter shuts down; releases on other threads do nothing from now on"},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cubehip._native",
	"libcubehip's hot calls and DLPack support for the cubehip package (see _native.c).", -1, methods, NULL, NULL, NULL, NULL};

/* _hostpool.c: the cache of host memory under the arrays that large reads return. */
int cubehip_hostpool_add(PyObject* module);

PyMODINIT_FUNC PyInit__native(void) {
	PyObject* m = PyModule_Create(&module);
	if (m == NULL) return NULL;
	if (cubehip_hostpool_add(m) != 0) {
		Py_DECREF(m);
		return NULL;
	}
	struct {
		PyObject** name;
		const char* text;
	} names[] = {
		{&name_h, "_h"}, {&name_exports, "_exports"}, {&name_stream, "stream"}, {&name_max_version, "max_version"},
		{&name_dl_device, "dl_device"}, {&name_copy, "copy"}, {&name_base, "_base"}, {&name_device, "device"},
		{&name_platform, "platform"}, {&name_index, "index"}, {&name_shape, "shape"}, {&name_dtype, "dtype"},
		{&name_dunder_dlpack, "__dlpack__"}, {&name_import, "_import"}, {&name_stream_attr, "stream"}, {&name_nbytes, "nbytes"},
		{&name_dunder_dlpack_device, "__dlpack_device__"}, {&name_kept, "_kept"}, {&name_give, "give"},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if ((*names[i].name = PyUnicode_InternFromString(names[i].text)) == NULL) {
			Py_DECREF(m);
			return NULL;
		}
	if ((version_1_0 = Py_BuildValue("(ii)", 1, 0)) == NULL || (empty_tuple = PyTuple_New(0)) == NULL ||
	    (zero = PyLong_FromLong(0)) == NULL || PyModule_AddIntConstant(m, "LAUNCH_MAX_ARGS", LAUNCH_MAX_ARGS) != 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
