/* The private header of cubehip._native, the extension module compiled from _native.c (the
 * module: binding to libcubehip, the method table, the interpreter's life), _launch.c (the
 * launch and sync calls, and a kernel's call and a device's sync as built-in functions),
 * _buffers.c (a buffer's calls, DeviceArray.__del__) and _dlpack.c (DLPack export and
 * import, __dlpack__, from_dlpack). What more than one of them uses is declared here, once;
 * everything is hidden from the module's symbol table but PyInit__native. */
#ifndef CUBEHIP_NATIVE_H
#define CUBEHIP_NATIVE_H

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

#pragma GCC visibility push(hidden)

/* ---- the C ABI (include/cubehip.h), as this module calls it ------------------------------
 * A handle is a struct of one uint64_t, which the x86-64 and AArch64 conventions pass as a
 * bare uint64_t: declared so here, as the package's ctypes declarations do.
 * tests/test_abi_header.py holds each function pointer below, and the name bind() looks it
 * up by, to the header's prototype. */
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

extern status_t (*c_launch)(uint64_t kernel, uint64_t stream, const uint32_t* grid, const cubehip_arg* args, size_t n);
extern status_t (*c_device_sync)(uint64_t device, uint64_t stream);
extern status_t (*c_buffer_alloc)(uint64_t device, uint64_t stream, uint64_t size, uint64_t* out);
extern status_t (*c_buffer_release)(uint64_t buffer);
extern status_t (*c_buffer_recycle)(uint64_t buffer, int32_t* kept);
extern status_t (*c_buffer_read)(uint64_t buffer, uint64_t stream, uint64_t offset, void* dst, uint64_t size);
extern status_t (*c_graph_replay)(uint64_t graph);
extern status_t (*c_buffer_sync)(uint64_t buffer);
extern status_t (*c_buffer_device_pointer)(uint64_t buffer, uint64_t* ptr);
extern status_t (*c_buffer_import_flags)(uint64_t device, uint64_t stream, uint64_t ptr, uint64_t size,
	void (*release)(void*), void* user_data, uint32_t flags, uint64_t* out);
extern status_t (*c_stream_wait_native)(uint64_t device, uint64_t stream, uint64_t native_stream);
extern status_t (*c_stream_native_handle)(uint64_t device, uint64_t stream, uint64_t* out);
extern status_t (*c_buffer_order_before)(uint64_t buffer, uint64_t native_stream);

/* ---- small helpers ----------------------------------------------------------------------- */

static inline PyObject* status_of(status_t st) { return PyLong_FromLong((long)st); }

/* args[i] as a uint64 into *out; 0 with TypeError or OverflowError set. */
static inline int u64_arg(PyObject* const* args, Py_ssize_t i, uint64_t* out) {
	unsigned long long v = PyLong_AsUnsignedLongLong(args[i]);
	if (v == (unsigned long long)-1 && PyErr_Occurred()) return 0;
	*out = (uint64_t)v;
	return 1;
}

/* nargs ints into v; TypeError for a wrong count. */
static inline int u64_args(const char* name, PyObject* const* args, Py_ssize_t nargs, Py_ssize_t want, uint64_t* v) {
	if (nargs != want) {
		PyErr_Format(PyExc_TypeError, "%s takes %d arguments (%d given)", name, (int)want, (int)nargs);
		return 0;
	}
	for (Py_ssize_t i = 0; i < nargs; i++)
		if (!u64_arg(args, i, &v[i])) return 0;
	return 1;
}

static inline int bound(void) {
	if (c_launch != NULL) return 1;
	PyErr_SetString(PyExc_RuntimeError, "cubehip._native: bind(library_path) was not called");
	return 0;
}

#define LAUNCH_MAX_ARGS 64 /* more than this, and the package keeps its Python call */

/* ---- interned names and constants, made by PyInit__native (_native.c) --------------------- */

extern PyObject *empty_tuple, *name_base, *name_copy, *name_device, *name_dl_device,
	*name_dtype, *name_dunder_dlpack, *name_dunder_dlpack_device, *name_exports, *name_give,
	*name_h, *name_import, *name_index, *name_kept, *name_max_version, *name_nbytes,
	*name_platform, *name_shape, *name_stream, *name_stream_attr, *version_1_0, *zero;

/* ---- helpers more than one file calls ---------------------------------------------------- */

int attr_handle(PyObject* o, PyObject* name, uint64_t* out);
PyObject* hand_on_self(PyObject* slow, PyObject* first, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
int int_in(PyObject* o, long long lo, long long hi, long long* out);
int u64_in(PyObject* o, uint64_t* out);
int python_alive(void);

/* ---- the module's functions, for its method table (_native.c) ------------------------------ */

PyObject* n_array_del_method(PyObject* self, PyObject* type);
PyObject* n_buffer_alloc(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_buffer_read(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_buffer_recycle(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_buffer_release(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_device_sync(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_device_syncer(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_dlpack_device_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_dlpack_export(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_dlpack_import(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_dlpack_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_dlpack_take(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_export_count(PyObject* self, PyObject* arg);
PyObject* n_export_leave(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_from_dlpack_function(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_graph_replay(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_kernel_launcher(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_live_exports(PyObject* self, PyObject* unused);
PyObject* n_object_import(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* n_stream_native_handle(PyObject* self, PyObject* const* args, Py_ssize_t nargs);

#pragma GCC visibility pop

#endif
