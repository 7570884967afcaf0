/* Support for the Python package's DLPack export (bindings/python, cubehip/_dlpack.py); not
 * part of the C ABI, and unused by C hosts.
 *
 * A DLPack capsule's destructor and a DLManagedTensor's deleter are called from C by
 * whoever frees them, often while a Python exception is in flight (a frame unwinding its
 * locals, a consumer that refused the tensor). Python code cannot run then: every call it
 * makes fails with SystemError and the exception in flight is lost. These two functions
 * set the exception aside (PyErr_Fetch), run the Python side, and put it back
 * (PyErr_Restore). A consumer may also call the deleter without holding the GIL, from
 * any thread (PyTorch frees a tensor's storage so): the deleter takes the GIL first
 * (PyGILState_Ensure, which a thread already holding it may call too), since PyErr_Fetch
 * without it dereferences a null thread state. The Python C API is looked up in the process (a Python interpreter
 * exports it to the extensions it loads), so the library does not link against Python. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

/* The head of dlpack.h's DLManagedTensor: only manager_ctx and deleter are read here. */
typedef struct {
	void* data;
	int32_t device[2];
	int32_t ndim;
	uint8_t dtype[4];
	int64_t* shape;
	int64_t* strides;
	uint64_t byte_offset;
} capi_dltensor;
typedef struct capi_dlmanaged {
	capi_dltensor dl_tensor;
	void* manager_ctx;
	void (*deleter)(struct capi_dlmanaged*);
} capi_dlmanaged;

static void (*py_fetch)(void**, void**, void**);
static void (*py_restore)(void*, void*, void*);
static int (*py_is_valid)(void*, const char*);
static void* (*py_get_pointer)(void*, const char*);
static int (*py_gil_ensure)(void);
static void (*py_gil_release)(int);
static void (*release_ctx)(void*);

/* Sets the Python function (a ctypes callback taking manager_ctx) that gives an exported
 * tensor back. Returns 0 when the Python C API is not found in the process. Called once,
 * with the GIL held, before any tensor is exported. */
int capi_python_dlpack_init(void (*release)(void*)) {
	py_fetch = (void (*)(void**, void**, void**))dlsym(RTLD_DEFAULT, "PyErr_Fetch");
	py_restore = (void (*)(void*, void*, void*))dlsym(RTLD_DEFAULT, "PyErr_Restore");
	py_is_valid = (int (*)(void*, const char*))dlsym(RTLD_DEFAULT, "PyCapsule_IsValid");
	py_get_pointer = (void* (*)(void*, const char*))dlsym(RTLD_DEFAULT, "PyCapsule_GetPointer");
	py_gil_ensure = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Ensure");
	py_gil_release = (void (*)(int))dlsym(RTLD_DEFAULT, "PyGILState_Release");
	if (!py_fetch || !py_restore || !py_is_valid || !py_get_pointer || !py_gil_ensure || !py_gil_release) return 0;
	release_ctx = release;
	return 1;
}

/* The DLManagedTensor deleter: called exactly once by the consumer, with or without the
 * GIL, from any thread, or by the capsule below if nobody consumed it. */
void capi_python_dlpack_deleter(capi_dlmanaged* m) {
	if (m == NULL || release_ctx == NULL) return;
	int gil = py_gil_ensure();
	void *type, *value, *tb;
	py_fetch(&type, &value, &tb);
	release_ctx(m->manager_ctx);
	py_restore(type, value, tb);
	py_gil_release(gil);
}

/* The capsule's destructor. A consumer that took the tensor renamed the capsule
 * "used_dltensor" and owns the deleter call; a capsule still named "dltensor" was never
 * consumed and gives the tensor back itself. */
void capi_python_dlpack_capsule_destructor(void* capsule) {
	if (py_is_valid == NULL) return;
	void *type, *value, *tb;
	py_fetch(&type, &value, &tb);
	if (py_is_valid(capsule, "dltensor")) {
		capi_dlmanaged* m = py_get_pointer(capsule, "dltensor");
		if (m != NULL && m->deleter != NULL) m->deleter(m);
	}
	py_restore(type, value, tb);
}

/* ---- Import: the release of memory cubehip.from_dlpack and cubehip.asarray took ------------
 *
 * cubehip_buffer_import calls its release on a thread of the library's, which Python never
 * saw and which holds no interpreter lock, once the device no longer uses the memory. These
 * releases take the lock (PyGILState_Ensure), let go of the producer's tensor or object,
 * and give the lock back. While the interpreter shuts down, a thread that takes the lock
 * is ended on the spot (and a thread of the Go runtime must never end that way), so then
 * they do nothing: the producer's memory goes with the process. */

typedef struct capi_dlmanaged_versioned {
	uint32_t version[2];
	void* manager_ctx;
	void (*deleter)(struct capi_dlmanaged_versioned*);
	uint64_t flags;
	capi_dltensor dl_tensor;
} capi_dlmanaged_versioned;

static int (*py_is_initialized)(void);
static int (*py_is_finalizing)(void);
static void (*py_decref)(void*);

/* Resolves what the releases need; 0 when the process lacks it. Called once, with the GIL. */
int capi_python_import_init(void) {
	py_gil_ensure = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Ensure");
	py_gil_release = (void (*)(int))dlsym(RTLD_DEFAULT, "PyGILState_Release");
	py_is_initialized = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
	/* Public from Python 3.13; the same function carried a leading underscore before. */
	py_is_finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
	if (!py_is_finalizing) py_is_finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
	py_decref = (void (*)(void*))dlsym(RTLD_DEFAULT, "Py_DecRef");
	return py_gil_ensure && py_gil_release && py_is_initialized && py_is_finalizing && py_decref;
}

static int python_alive(void) { return py_is_initialized && py_is_initialized() && !py_is_finalizing(); }

/* The release of a DLPack import: user_data is the producer's DLManagedTensor, or its
 * DLManagedTensorVersioned with the lowest bit set (both are pointer-aligned), whose
 * deleter is called once. */
void capi_python_release_dltensor(void* user_data) {
	if (user_data == NULL || !python_alive()) return;
	int gil = py_gil_ensure();
	uintptr_t p = (uintptr_t)user_data;
	if (p & 1) {
		capi_dlmanaged_versioned* m = (capi_dlmanaged_versioned*)(p & ~(uintptr_t)1);
		if (m->deleter != NULL) m->deleter(m);
	} else {
		capi_dlmanaged* m = (capi_dlmanaged*)p;
		if (m->deleter != NULL) m->deleter(m);
	}
	py_gil_release(gil);
}

/* The release of an import that kept a Python object alive (the producer of a
 * __cuda_array_interface__): user_data is a reference to it, given back here. */
void capi_python_release_object(void* user_data) {
	if (user_data == NULL || !python_alive()) return;
	int gil = py_gil_ensure();
	py_decref(user_data);
	py_gil_release(gil);
}
