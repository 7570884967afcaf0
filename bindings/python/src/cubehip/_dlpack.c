/* cubehip._native's DLPack support: a device array exported as a "dltensor" capsule (or
 * DLPack 1.0's "dltensor_versioned", for a consumer that asks for it),
 * __dlpack__ and __dlpack_device__ as methods of the extension's, another library's tensor
 * imported as a cubehip buffer, and from_dlpack's common call without a Python frame. */
#include "_native.h"

#include <stddef.h>

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
	DLManagedTensor m;           /* the legacy tensor ("dltensor"): first, so a pointer to it is the export's */
	DLManagedTensorVersioned v;  /* the DLPack 1.0 one ("dltensor_versioned"), for a consumer that asks max_version >= (1, 0) */
	int versioned;               /* which of the two was handed out */
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

/* The versioned tensor's deleter: the same release, from the DLManagedTensorVersioned
 * inside the export. */
static void export_deleter_versioned(DLManagedTensorVersioned* v) {
	if (v == NULL || !python_alive()) return;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *type, *value, *tb;
	PyErr_Fetch(&type, &value, &tb);
	if (live_remove(v)) give_back((export_t*)((char*)v - offsetof(export_t, v)));
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

/* The versioned capsule's ("dltensor_versioned", "used_dltensor_versioned" once taken). */
static void export_capsule_destructor_versioned(PyObject* capsule) {
	if (!PyCapsule_IsValid(capsule, "dltensor_versioned")) return;
	PyObject *type, *value, *tb;
	PyErr_Fetch(&type, &value, &tb);
	DLManagedTensorVersioned* v = PyCapsule_GetPointer(capsule, "dltensor_versioned");
	if (v != NULL && v->deleter != NULL) v->deleter(v);
	PyErr_Clear();
	PyErr_Restore(type, value, tb);
}

/* The export, both callers': the order, the device pointer, the tensor, its capsule and the
 * owner's count. Returns the capsule; NULL with an exception set; or NULL with none set and
 * *st the status of the C ABI call that refused (nothing exported then). */
static PyObject* export_of(PyObject* owner, uint64_t buffer, uint64_t order, uint64_t native, long device_type, long device_id,
	PyObject* shape, unsigned code, unsigned bits, int versioned, status_t* st) {
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
	const DLTensor t = {(void*)(uintptr_t)ptr, {(int32_t)device_type, (int32_t)device_id}, (int32_t)nd,
		{(uint8_t)code, (uint8_t)bits, 1}, e->shape, NULL, 0};
	void* handed = e; /* what the capsule holds and the live set knows */
	e->versioned = versioned;
	if (versioned) {
		/* DLPack 1.0; flags 0: writable, and not a copy. */
		e->v = (DLManagedTensorVersioned){1, 0, e, export_deleter_versioned, 0, t};
		handed = &e->v;
	} else {
		e->m.dl_tensor = t;
		e->m.manager_ctx = e;
		e->m.deleter = export_deleter;
	}
	if (live_add(handed) < 0) {
		Py_DECREF(lease);
		free(e);
		return NULL;
	}
	e->lease_obj = lease; /* the reference lease_of gave */
	e->lease = l;
	e->lease->count++;
	Py_INCREF(owner);
	e->owner = owner;
	PyObject* capsule = versioned ? PyCapsule_New(handed, "dltensor_versioned", export_capsule_destructor_versioned)
	                              : PyCapsule_New(handed, "dltensor", export_capsule_destructor);
	if (capsule == NULL) {
		PyObject *type, *value, *tb;
		PyErr_Fetch(&type, &value, &tb);
		live_remove(handed);
		give_back(e);
		PyErr_Restore(type, value, tb);
	}
	return capsule;
}

/* dlpack_export(owner, buffer, order, native_stream, device_type, device_id, shape, code, bits[, versioned])
 *   -> a "dltensor" capsule over the buffer's memory ("dltensor_versioned", DLPack 1.0, when
 *   versioned is true), or the status (an int) of a failed call.
 *
 * order: 0 none (the consumer orders itself), 1 a host wait for the buffer's writes
 * (cubehip_buffer_sync), 2 the buffer's writes ordered before native_stream on the device
 * (cubehip_buffer_order_before). The whole export is this one call: the wait or the
 * ordering, the device pointer, the tensor and its capsule, the owner's count. */
PyObject* n_dlpack_export(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	if (nargs != 9 && nargs != 10) {
		PyErr_Format(PyExc_TypeError, "dlpack_export takes 9 or 10 arguments (%d given)", (int)nargs);
		return NULL;
	}
	int versioned = 0;
	if (nargs == 10 && (versioned = PyObject_IsTrue(args[9])) < 0) return NULL;
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
	PyObject* capsule = export_of(owner, buffer, order, native, device_type, device_id, shape, (unsigned)code, (unsigned)bits, versioned, &st);
	if (capsule == NULL && !PyErr_Occurred()) return status_of(st);
	return capsule;
}

/* export_leave(lease, buffer) -> True when exports of the lease's memory are live: the last
 * of them gives the buffer back (the owner's _export_pending_gone); False otherwise (lease 0:
 * never exported), and the caller gives it back itself. */
PyObject* n_export_leave(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_export_count(PyObject* self, PyObject* arg) {
	(void)self;
	if (!PyCapsule_IsValid(arg, LEASE)) return PyLong_FromLong(0);
	lease_t* l = PyCapsule_GetPointer(arg, LEASE);
	return PyLong_FromSsize_t(l != NULL ? l->count : 0);
}

PyObject* n_live_exports(PyObject* self, PyObject* unused) {
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
int attr_handle(PyObject* o, PyObject* name, uint64_t* out) {
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
	int versioned = 0;
	if (nargs != 0 || dl_slow == NULL || (PyObject*)Py_TYPE(self) != dl_array_type || c_launch == NULL) goto slow;
	if (kwnames != NULL) {
		Py_ssize_t nk = PyTuple_Size(kwnames);
		for (Py_ssize_t i = 0; i < nk; i++) {
			PyObject *k = PyTuple_GetItem(kwnames, i), *v = args[nargs + i];
			if (name_is(k, name_stream))
				stream = v;
			else if (name_is(k, name_max_version)) {
				/* (major, minor): DLPack 1.0's versioned tensor from major 1 on, the legacy
				 * one below (and for None); anything else is the package's to refuse. */
				long long major;
				if (v == Py_None)
					versioned = 0;
				else if (PyTuple_CheckExact(v) && PyTuple_Size(v) == 2 && int_in(PyTuple_GetItem(v, 0), 0, INT32_MAX, &major))
					versioned = major >= 1;
				else
					goto slow;
			}
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
	r = export_of(base != Py_None ? base : self, h, order, native, device_type, device_id, shape, code, bits, versioned, &st);
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
PyObject* n_dlpack_device_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_dlpack_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_dlpack_import(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_dlpack_take(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_from_dlpack_function(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_object_import(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
