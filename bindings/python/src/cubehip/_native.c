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
 * them: the package passes only those of its own objects.
 *
 * The module is four files, by job (_native.h declares what they share): this one binds to
 * the library and makes the module; _launch.c launches and syncs; _buffers.c is a buffer's
 * calls; _dlpack.c exchanges arrays with other libraries through DLPack. */
#include "_native.h"

/* ---- the C ABI's functions, found by bind() ------------------------------------------- */

status_t (*c_launch)(uint64_t kernel, uint64_t stream, const uint32_t* grid, const cubehip_arg* args, size_t n);
status_t (*c_device_sync)(uint64_t device, uint64_t stream);
status_t (*c_buffer_alloc)(uint64_t device, uint64_t stream, uint64_t size, uint64_t* out);
status_t (*c_buffer_release)(uint64_t buffer);
status_t (*c_buffer_recycle)(uint64_t buffer, int32_t* kept);
status_t (*c_buffer_read)(uint64_t buffer, uint64_t stream, uint64_t offset, void* dst, uint64_t size);
status_t (*c_graph_replay)(uint64_t graph);
status_t (*c_buffer_sync)(uint64_t buffer);
status_t (*c_buffer_device_pointer)(uint64_t buffer, uint64_t* ptr);
status_t (*c_buffer_import_flags)(uint64_t device, uint64_t stream, uint64_t ptr, uint64_t size,
	void (*release)(void*), void* user_data, uint32_t flags, uint64_t* out);
status_t (*c_stream_wait_native)(uint64_t device, uint64_t stream, uint64_t native_stream);
status_t (*c_stream_native_handle)(uint64_t device, uint64_t stream, uint64_t* out);
status_t (*c_buffer_order_before)(uint64_t buffer, uint64_t native_stream);

PyObject *empty_tuple, *name_base, *name_copy, *name_device, *name_dl_device, *name_dtype,
	*name_dunder_dlpack, *name_dunder_dlpack_device, *name_exports, *name_give, *name_h,
	*name_import, *name_index, *name_kept, *name_max_version, *name_nbytes, *name_platform,
	*name_shape, *name_stream, *name_stream_attr, *version_1_0, *zero;

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

int python_alive(void) { return !atomic_load(&exiting) && Py_IsInitialized(); }

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
