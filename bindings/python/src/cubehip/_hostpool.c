/* cubehip._native's host memory cache: the memory of the numpy arrays that a large read
 * returns (DeviceArray.get() with no out), kept when an array is gone for the next read of
 * the same size.
 *
 * Why: a new numpy array of many megabytes is a fresh mapping (glibc maps every block of
 * 32 MiB or more on its own and unmaps it on free), and the kernel zeroes each of its
 * pages at the read's first touch. On the H200 machine a read of 256 MiB into a new array
 * ran at 0.57-0.64 of the host's 16-thread memcpy, into an array used before at 0.97-1.09
 * (docs/benchmarks.md): the zeroing pass and the page faults are the difference, and even
 * the host's own memcpy into fresh huge pages reaches only 0.76-0.83. A read that loops
 * over d.get() (what users write) pays them every time; with this cache, only the first.
 *
 * Each block is one anonymous mapping, its length rounded up to 2 MiB and advised for huge
 * pages. It belongs to a HostMemory object, which numpy takes as the array's base through
 * __array_interface__: every view of the array refers to that object too (numpy keeps the
 * owner of the memory as each view's base), so the block comes back to the cache only when
 * the last array over it is gone. A block comes back holding the bytes of its last read,
 * and is handed out again only to a read that overwrites every byte the new array shows
 * before the array is returned (a read that fails raises, and its array is dropped).
 *
 * The cache keeps at most `limit` bytes (host_cache_limit, $CUBEHIP_HOST_CACHE_MB; the
 * oldest blocks are unmapped first) and host_cache_release() unmaps them all. Every call
 * here runs with the GIL held, which is what guards the cache. */
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030A0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

int cubehip_hostpool_add(PyObject* module); /* called by _native.c's PyInit__native */

/* Blocks are whole huge pages: a read's staging copies and the kernel's faults then work
 * in 2 MiB pages where the system gives them. */
#define BLOCK_ALIGN ((size_t)2 << 20)
/* Blocks the cache holds at most, whatever their bytes: a linear search stays short. */
#define MAX_CACHED 64

typedef struct {
	void* ptr;
	size_t len; /* the mapping's length, a multiple of BLOCK_ALIGN */
} block;

static block cached[MAX_CACHED]; /* oldest first */
static int ncached;
static size_t cached_bytes;
static size_t limit = (size_t)1 << 30; /* host_cache_limit */

static void unmap(block b) { munmap(b.ptr, b.len); }

/* A block of len bytes: the newest cached one of that length, else a new mapping. */
static block take(size_t len) {
	for (int i = ncached - 1; i >= 0; i--)
		if (cached[i].len == len) {
			block b = cached[i];
			memmove(&cached[i], &cached[i + 1], (size_t)(ncached - i - 1) * sizeof(block));
			ncached--;
			cached_bytes -= len;
			return b;
		}
	block b = {NULL, len};
	void* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) return b;
	madvise(p, len, MADV_HUGEPAGE); /* advice: refused where huge pages are off */
	b.ptr = p;
	return b;
}

/* Keeps b for the next read of its length, or unmaps it; the oldest blocks go first to
 * make room under the limit. */
static void give(block b) {
	if (b.len > limit) {
		unmap(b);
		return;
	}
	while (ncached > 0 && (cached_bytes + b.len > limit || ncached == MAX_CACHED)) {
		cached_bytes -= cached[0].len;
		unmap(cached[0]);
		memmove(&cached[0], &cached[1], (size_t)(ncached - 1) * sizeof(block));
		ncached--;
	}
	cached[ncached++] = b;
	cached_bytes += b.len;
}

typedef struct {
	PyObject_HEAD
	block mem;
	PyObject* interface; /* __array_interface__ */
} host_memory;

static void host_memory_dealloc(PyObject* self) {
	host_memory* h = (host_memory*)self;
	PyTypeObject* tp = Py_TYPE(self);
	if (h->mem.ptr != NULL) give(h->mem);
	Py_XDECREF(h->interface);
	freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
	tp_free(self);
	Py_DECREF(tp); /* a heap type's instances hold a reference to it */
}

static PyMemberDef host_memory_members[] = {
	{"__array_interface__", T_OBJECT_EX, offsetof(host_memory, interface), READONLY, "numpy's view of the memory"},
	{NULL, 0, 0, 0, NULL},
};

static PyType_Slot host_memory_slots[] = {
	{Py_tp_dealloc, host_memory_dealloc},
	{Py_tp_members, host_memory_members},
	{Py_tp_doc, "Host memory from cubehip's cache, the base of the numpy array a large read returns."},
	{0, NULL},
};

static PyType_Spec host_memory_spec = {"cubehip._native.HostMemory", sizeof(host_memory), 0, Py_TPFLAGS_DEFAULT, host_memory_slots};

static PyObject* host_memory_type;

/* host_memory(shape, typestr, nbytes) -> HostMemory whose __array_interface__ describes a
 * writable C-contiguous array of shape and typestr over nbytes (> 0) of cached memory. */
static PyObject* n_host_memory(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	if (nargs != 3 || !PyTuple_Check(args[0]) || !PyUnicode_Check(args[1])) {
		PyErr_SetString(PyExc_TypeError, "host_memory(shape: tuple, typestr: str, nbytes: int)");
		return NULL;
	}
	Py_ssize_t nbytes = PyLong_AsSsize_t(args[2]);
	if (nbytes == -1 && PyErr_Occurred()) return NULL;
	if (nbytes <= 0 || (size_t)nbytes > SIZE_MAX - BLOCK_ALIGN) {
		PyErr_Format(PyExc_ValueError, "host_memory: %zd bytes is no block size", nbytes);
		return NULL;
	}
	size_t len = ((size_t)nbytes + BLOCK_ALIGN - 1) & ~(BLOCK_ALIGN - 1);
	host_memory* h = (host_memory*)PyType_GenericAlloc((PyTypeObject*)host_memory_type, 0);
	if (h == NULL) return NULL;
	h->mem = take(len);
	if (h->mem.ptr == NULL) {
		Py_DECREF(h);
		return PyErr_Format(PyExc_MemoryError, "host_memory: cannot map %zu bytes for a read's array", len);
	}
	h->interface = Py_BuildValue("{s:O,s:O,s:(KO),s:i}", "shape", args[0], "typestr", args[1], "data",
	                             (unsigned long long)(uintptr_t)h->mem.ptr, Py_False, "version", 3);
	if (h->interface == NULL) {
		Py_DECREF(h);
		return NULL;
	}
	return (PyObject*)h;
}

static PyObject* n_host_cache_limit(PyObject* self, PyObject* arg) {
	(void)self;
	Py_ssize_t n = PyLong_AsSsize_t(arg);
	if (n == -1 && PyErr_Occurred()) return NULL;
	if (n < 0) {
		PyErr_SetString(PyExc_ValueError, "host_cache_limit: a byte count, 0 or more");
		return NULL;
	}
	size_t old = limit;
	limit = (size_t)n;
	while (ncached > 0 && cached_bytes > limit) {
		cached_bytes -= cached[0].len;
		unmap(cached[0]);
		memmove(&cached[0], &cached[1], (size_t)(ncached - 1) * sizeof(block));
		ncached--;
	}
	return PyLong_FromSize_t(old);
}

static PyObject* n_host_cache_release(PyObject* self, PyObject* unused) {
	(void)self, (void)unused;
	size_t freed = cached_bytes;
	for (int i = 0; i < ncached; i++) unmap(cached[i]);
	ncached = 0;
	cached_bytes = 0;
	return PyLong_FromSize_t(freed);
}

static PyObject* n_host_cache_bytes(PyObject* self, PyObject* unused) {
	(void)self, (void)unused;
	return PyLong_FromSize_t(cached_bytes);
}

static PyMethodDef hostpool_methods[] = {
	{"host_memory", (PyCFunction)(void (*)(void))n_host_memory, METH_FASTCALL,
	 "host_memory(shape, typestr, nbytes) -> HostMemory, the base of a new array over cached host memory"},
	{"host_cache_limit", n_host_cache_limit, METH_O, "host_cache_limit(bytes) -> the limit before; unmaps the oldest blocks over it"},
	{"host_cache_release", n_host_cache_release, METH_NOARGS, "host_cache_release() -> the bytes unmapped: every cached block"},
	{"host_cache_bytes", n_host_cache_bytes, METH_NOARGS, "host_cache_bytes() -> the bytes the cache holds"},
	{NULL, NULL, 0, NULL},
};

int cubehip_hostpool_add(PyObject* module) {
	host_memory_type = PyType_FromSpec(&host_memory_spec);
	if (host_memory_type == NULL) return -1;
	if (PyModule_AddObject(module, "HostMemory", host_memory_type) != 0) return -1;
	Py_INCREF(host_memory_type); /* PyModule_AddObject took one; this file keeps its own */
	return PyModule_AddFunctions(module, hostpool_methods);
}
