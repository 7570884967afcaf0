/* cubehip._native's launches and syncs: the plain calls the package's Python makes, and a
 * kernel's call and a device's sync as built-in functions of their own (kernel_launcher,
 * device_syncer), which take the common call without a Python frame. */
#include "_native.h"

/* ---- the hot calls --------------------------------------------------------------------------
 * Every call but the launch gives the GIL up around the library call, as ctypes does: it may
 * wait (a sync, a read, an allocation that grows a pool) and other threads must run then. */

/* launch(kernel, stream, grid_address, args_address, count) -> status */
PyObject* n_launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[5];
	if (!u64_args("launch", args, nargs, 5, v) || !bound()) return NULL;
	/* The GIL is kept: a launch hands the work to the launch queue and returns sooner than
	 * giving the lock up and taking it back takes; it waits only while that queue is full,
	 * for the driver, never for Python. */
	return status_of(c_launch(v[0], v[1], (const uint32_t*)(uintptr_t)v[2], (const cubehip_arg*)(uintptr_t)v[3], (size_t)v[4]));
}

/* device_sync(device, stream) -> status */
PyObject* n_device_sync(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[2];
	if (!u64_args("device_sync", args, nargs, 2, v) || !bound()) return NULL;
	status_t st;
	Py_BEGIN_ALLOW_THREADS
	st = c_device_sync(v[0], v[1]);
	Py_END_ALLOW_THREADS
	return status_of(st);
}

/* graph_replay(graph) -> status */
PyObject* n_graph_replay(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_stream_native_handle(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
int int_in(PyObject* o, long long lo, long long hi, long long* out) {
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
int u64_in(PyObject* o, uint64_t* out) {
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
PyObject* hand_on_self(PyObject* slow, PyObject* first, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
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
PyObject* n_kernel_launcher(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_device_syncer(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
