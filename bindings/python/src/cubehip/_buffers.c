/* cubehip._native's buffer calls: allocation, release, recycling and reads, and
 * DeviceArray.__del__ as a method of the extension's. */
#include "_native.h"

/* buffer_alloc(device, stream, size) -> the handle (> 0), or minus the status: a handle's
 * top bit is clear (its kind is in the top byte), so the sign tells them apart. */
PyObject* n_buffer_alloc(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_buffer_release(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_buffer_recycle(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
PyObject* n_buffer_read(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
	(void)self;
	uint64_t v[5];
	if (!u64_args("buffer_read", args, nargs, 5, v) || !bound()) return NULL;
	status_t st;
	Py_BEGIN_ALLOW_THREADS
	st = c_buffer_read(v[0], v[1], v[2], (void*)(uintptr_t)v[3], v[4]);
	Py_END_ALLOW_THREADS
	return status_of(st);
}

/* ---- DeviceArray.__del__ as a method of the extension's -------------------------------------
 *
 * The package's __del__ (DeviceArray._del_py), made without a Python frame: an array that
 * owns its memory (no base), still holds it (_h) on an open device (its _h) gives it back:
 * an import to the library at once (never kept), any other to the device's KeptBuffers
 * (device._kept.give(h, stream, nbytes or 1)). Like the package's, it raises nothing: a
 * half torn-down interpreter or a closed device is nothing worth an exception nobody can
 * catch. */

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
PyObject* n_array_del_method(PyObject* self, PyObject* type) {
	(void)self;
	if (!PyType_Check(type)) {
		PyErr_SetString(PyExc_TypeError, "array_del_method: array_type must be a type");
		return NULL;
	}
	return PyDescr_NewMethod((PyTypeObject*)type, &array_del_def);
}
