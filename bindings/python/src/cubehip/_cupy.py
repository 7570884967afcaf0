"""CuPy's raw-kernel API over cubehip kernels: RawKernel and RawModule take CuPy's
constructor keywords and are called as CuPy's are, ``k(grid, block, args, shared_mem=0,
stream=None)``, so that a script of raw kernels switches by changing its import.

cubehip fixes a kernel's block and dynamic shared memory when it makes it (they are part of
what the library plans a launch with), where CuPy takes them per call: a RawKernel keeps one
cubehip Kernel per (block, shared_mem) it is called with, made on its first call with them.
A call with a shape seen before costs one dictionary lookup more than a Kernel's call.
"""

from __future__ import annotations

import ctypes
import errno
import os
import pickle
import re
from typing import Any, Sequence

import numpy as np

from . import _ffi
from ._array import DeviceArray
from ._current import current_device
from ._errors import CompileError, check, error
from ._kernel import Kernel, _dim3, _plain_grid
from ._stream import _string

# CuPy's compiler choices; cubehip compiles with the platform's own compiler (hipcc, nvcc
# through hiprtc/nvrtc, g++ on the cpu device) whichever is named, so they are accepted and
# have no effect.
_BACKENDS = ("nvrtc", "nvcc", "hiprtc", "hipcc")


def _options(options: Any) -> tuple[str, ...]:
    if isinstance(options, str):
        return (options,)
    return tuple(options)


def _check_backend(backend: str) -> None:
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(_BACKENDS)} (cubehip ignores it), not {backend!r}")


# cuComplex.h's names, the ones CuPy's translate_cucomplex takes over (its cuComplex bridge).
# HIP's <hip/hip_complex.h> has each under the same name with "hip" for "cu" (cuCaddf is
# hipCaddf, make_cuFloatComplex make_hipFloatComplex), the same types (float2 and double2
# underneath) and the same semantics, so a rename is the whole translation, on every platform.
_CUCOMPLEX_NAMES = (
    "cuFloatComplex", "cuComplex", "cuCrealf", "cuCimagf", "make_cuFloatComplex", "make_cuComplex", "cuConjf",
    "cuCaddf", "cuCsubf", "cuCmulf", "cuCdivf", "cuCabsf", "cuComplexDoubleToFloat", "cuCfmaf",
    "cuDoubleComplex", "cuCreal", "cuCimag", "make_cuDoubleComplex", "cuConj", "cuCadd", "cuCsub", "cuCmul",
    "cuCdiv", "cuCabs", "cuComplexFloatToDouble", "cuCfma",
)  # fmt: skip
_CUCOMPLEX_NAME = re.compile(r"\b(" + "|".join(sorted(_CUCOMPLEX_NAMES, key=len, reverse=True)) + r")\b")
_CUCOMPLEX_INCLUDE = re.compile(r'^([ \t]*#[ \t]*include[ \t]*)[<"]cuComplex\.h[>"]', re.M)


def translate_cucomplex(code: str) -> str:
    """code with cuComplex's names as HIP's and <hip/hip_complex.h> included: what a kernel
    made with translate_cucomplex=True compiles. A ``#include <cuComplex.h>`` line becomes
    HIP's header in place; a source without one gets it on a line of its own ahead, with
    ``#line 1`` after it, so that the compiler's messages number the source's lines as
    written either way."""
    code, n = _CUCOMPLEX_INCLUDE.subn(r"\1<hip/hip_complex.h>", code)
    code = _CUCOMPLEX_NAME.sub(lambda m: m.group(1).replace("cu", "hip", 1), code)
    return code if n else "#include <hip/hip_complex.h>\n#line 1\n" + code


def _write_log(log_stream: Any, log: str) -> None:
    if log_stream is not None and log:
        log_stream.write(log if log.endswith("\n") else log + "\n")
        flush = getattr(log_stream, "flush", None)
        if flush is not None:
            flush()


def _check_log_stream(log_stream: Any) -> None:
    if log_stream is not None and not callable(getattr(log_stream, "write", None)):
        raise TypeError(f"log_stream must be None or a text stream (sys.stdout, a file), not {type(log_stream).__name__}")


# What a pickled RawKernel or RawModule holds: what it was made with, not the device or
# its compiled kernels, which are compiled again (or found in the kernel caches) where it
# is unpickled. The version lets a later layout refuse an older pickle by name.
_PICKLE_VERSION = 1


def _unpickle_check(state: dict[str, Any], what: str) -> None:
    if state.get("cubehip_pickle") != _PICKLE_VERSION:
        raise pickle.UnpicklingError(f"this pickled {what} is of another cubehip version; make it again from its source")


class RawKernel:
    """CuPy's RawKernel: ``RawKernel(code, name, options=(), backend="nvrtc",
    translate_cucomplex=False, *, enable_cooperative_groups=False, jitify=False,
    device=None)``, called as ``k(grid, block, args, shared_mem=0, stream=None)``.

    code is HIP C++ with a ``__global__`` function name: an ``extern "C"`` name, or a C++
    name expression (``"reduce<float, 256>"``, a C++-linkage kernel's name). backend and jitify are
    accepted and ignored (cubehip compiles with the platform's compiler, and reads parameter
    types from the declaration itself). translate_cucomplex compiles a source written with
    cuComplex.h's names (cuFloatComplex, cuCaddf, make_cuDoubleComplex, ...) as HIP's
    (<hip/hip_complex.h>; see ``translate_cucomplex``). enable_cooperative_groups launches it cooperatively
    (hipModuleLaunchCooperativeKernel, as CuPy's cuLaunchCooperativeKernel): every block of
    the grid runs at once, so that blocks may wait for each other at cooperative groups'
    ``this_grid().sync()``; a grid over what the device holds at once raises CubehipError
    hipErrorCooperativeLaunchTooLarge, naming the limit (see
    ``Kernel.max_active_blocks_per_multiprocessor``). Like CuPy, it compiles on its first call,
    at ``k.kernel`` or at ``k.compile()``: a CompileError (``cubehip.CompileException``) is raised
    there. args is a tuple (or list) of device arrays, numpy scalars
    (``np.float32(a)``, ``np.int32(n)``) and Python numbers, each converted to its parameter's
    C type by the rules of cubehip.Kernel. Without device=, the kernel goes to the device of
    the arrays it is launched with. It pickles as what it was made with (not its device or
    compiled kernels) and compiles again where it is unpickled.
    """

    def __init__(
        self,
        code: str,
        name: str,
        options: Sequence[str] = (),
        backend: str = "nvrtc",
        translate_cucomplex: bool = False,
        *,
        enable_cooperative_groups: bool = False,
        jitify: bool = False,
        device: Any = None,
        arg_types: Sequence[Any] | None = None,
        name_expressions: Sequence[str] | None = None,
    ) -> None:
        if not isinstance(code, str) or not isinstance(name, str):
            raise TypeError("code and name must be str")
        # A RawModule's kernels carry its name expressions: one module on the device.
        self._names = None if name_expressions is None else tuple(name_expressions)
        _check_backend(backend)
        self.code, self.name = code, name
        self.translate_cucomplex = bool(translate_cucomplex)
        self.enable_cooperative_groups = bool(enable_cooperative_groups)
        self.options = _options(options)
        self.backend, self.jitify = backend, jitify
        self.device = device
        self.arg_types = arg_types
        self._setup()

    def _setup(self) -> None:
        # What is compiled: the source as given, or as translate_cucomplex rewrites it.
        self._source = translate_cucomplex(self.code) if self.translate_cucomplex else self.code
        # (block, shared_mem) as given -> the Kernel made for that launch shape.
        self._kernels: dict[tuple[Any, ...], Kernel] = {}

    @property
    def kernel(self) -> "_KernelOf":
        """The compiled kernel, compiled here if it was not (CuPy's ``k.kernel``, which
        compiles: a source, an option or a name that does not compile raises CompileError
        here). Called as cubehip's ``k.kernel(block=(256,), shared_mem=0, *,
        cooperative=None)`` it is the cubehip Kernel this RawKernel launches with for that
        launch shape (``kernel(grid, *args)``); called with CuPy's Function arguments
        ``k.kernel(grid, block, args, shared_mem=0, stream=None)`` it launches, as
        ``k(grid, block, args)``. Other attributes are those of the kernel of the default
        shape (``k.kernel.device``)."""
        return _KernelOf(self, self._kernel())

    def _kernel(self, block: Any = (256,), shared_mem: int = 0, *, cooperative: bool | None = None) -> Kernel:
        """The cubehip Kernel for block and shared_mem (made, and compiled, on first use);
        cooperative (default: enable_cooperative_groups) picks the cooperative kernel."""
        coop = self.enable_cooperative_groups if cooperative is None else bool(cooperative)
        # The constructor's launch mode is keyed by the shape alone, as every call finds it.
        tag: tuple[Any, ...] = () if coop == self.enable_cooperative_groups else (coop,)
        try:
            k = self._kernels.get((block, shared_mem, *tag))
        except TypeError:  # a list: not a key; its normalised tuple is
            k = None
        if k is not None and k._h:
            return k
        dims = _dim3(block, "block")
        k = self._kernels.get((dims, shared_mem, *tag))
        if k is None or k._h == 0:
            try:
                k = Kernel(self._source, self.name, block=dims, shared_mem=shared_mem, options=self.options,
                           device=self.device, arg_types=self.arg_types, cooperative=coop, name_expressions=self._names)
            except CompileError as e:
                # The log numbers the lines of the source as written (a translated source
                # keeps them), so dump() shows that source.
                e.source = self.code
                raise
            # Attributes set on the RawKernel hold for a kernel made later (on another device).
            for attr, value in getattr(self, "_set_attrs", {}).items():
                k.set_attribute(attr, value)
            self._kernels[(dims, shared_mem, *tag)] = k
        if _plain_grid(block):  # an int or a tuple of ints cannot change: remembered as given
            self._kernels[(block, shared_mem, *tag)] = k
        return k

    def __call__(self, grid: Any, block: Any, args: Sequence[Any], *, shared_mem: int = 0, stream: Any = None,
                 enable_cooperative_groups: bool = False) -> None:
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"{self.name}: args must be a tuple or list of the kernel's arguments, not {type(args).__name__}")
        if enable_cooperative_groups and not self.enable_cooperative_groups:
            k = self._kernel(block, shared_mem, cooperative=True)
        else:
            try:
                k = self._kernels[(block, shared_mem)]
            except (KeyError, TypeError):
                k = self._kernel(block, shared_mem)
        k(grid, *args, stream=stream)

    def compile(self, log_stream: Any = None, shared_mem: int = 0, *, block: Any = None) -> None:
        """Compiles now, rather than on the first call (CuPy's ``compile(log_stream=None)``):
        CompileError for a source, option or name that does not compile. log_stream (a
        text stream: sys.stdout, a file) receives the compiler's log; cubehip keeps the log
        of a failed compile only, so a compile that succeeds writes nothing. The compiled
        code is kept (and cached on disk), so a second compile costs a lookup, where CuPy
        compiles again. cubehip's own ``compile(block, shared_mem=0)`` (a block shape
        first, or ``block=``) makes the kernel of that launch shape now."""
        if block is None and log_stream is not None and (isinstance(log_stream, (int, tuple, list))
                                                          and not isinstance(log_stream, bool)):
            log_stream, block = None, log_stream  # cubehip's compile(block, shared_mem)
        _check_log_stream(log_stream)
        try:
            self._kernel((256,) if block is None else block, shared_mem)
        except CompileError as e:
            _write_log(log_stream, e.log)
            raise

    # --- function attributes (CuPy's): compiled first, on the kernel's device ---------------

    @property
    def attributes(self) -> dict[str, int]:
        """The kernel's function attributes, as CuPy's: a dict of max_threads_per_block,
        shared_size_bytes, const_size_bytes, local_size_bytes, num_regs, ptx_version,
        binary_version, cache_mode_ca, max_dynamic_shared_size_bytes and
        preferred_shared_memory_carveout (``Kernel.attributes``; 0 where the platform cannot
        tell). It compiles the kernel if it was not."""
        return self._kernel().attributes

    def _set_attribute(self, attr: str, value: int) -> None:
        self._kernel().set_attribute(attr, value)
        # Every launch shape's kernel on the device shares the function set here; one made
        # later on another device gets the value when it is made.
        if not hasattr(self, "_set_attrs"):
            self._set_attrs: dict[str, int] = {}
        self._set_attrs[attr] = value

    @property
    def max_threads_per_block(self) -> int:
        """The largest block the kernel launches with."""
        return self._kernel().max_threads_per_block

    @property
    def shared_size_bytes(self) -> int:
        """The kernel's static shared memory (on the cpu device, its module's as laid out in its shared arena)."""
        return self._kernel().shared_size_bytes

    @property
    def const_size_bytes(self) -> int:
        """The constant memory the kernel uses."""
        return self._kernel().const_size_bytes

    @property
    def local_size_bytes(self) -> int:
        """Local memory per thread."""
        return self._kernel().local_size_bytes

    @property
    def num_regs(self) -> int:
        """Registers per thread."""
        return self._kernel().num_regs

    @property
    def ptx_version(self) -> int:
        """The virtual architecture the kernel was compiled for (major*10+minor)."""
        return self._kernel().ptx_version

    @property
    def binary_version(self) -> int:
        """The architecture of the kernel's binary (major*10+minor)."""
        return self._kernel().binary_version

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        """The most dynamic shared memory a call may ask for (``shared_mem=``). Setting it
        raises (or lowers) the limit, as CuPy's setter does (hipFuncSetAttribute), up to what
        the device can give (more raises CubehipError hipErrorInvalidValue); a call over the
        value set raises, naming it and the device's limit."""
        return self._kernel().max_dynamic_shared_size_bytes

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        self._set_attribute("max_dynamic_shared_size_bytes", value)

    @property
    def preferred_shared_memory_carveout(self) -> int:
        """The percent of L1 preferred as shared memory (-1: no preference), a hint."""
        return self._kernel().preferred_shared_memory_carveout

    @preferred_shared_memory_carveout.setter
    def preferred_shared_memory_carveout(self, value: int) -> None:
        self._set_attribute("preferred_shared_memory_carveout", value)

    def __getstate__(self) -> dict[str, Any]:
        return {
            "cubehip_pickle": _PICKLE_VERSION, "code": self.code, "name": self.name, "options": self.options,
            "backend": self.backend, "translate_cucomplex": self.translate_cucomplex,
            "enable_cooperative_groups": self.enable_cooperative_groups, "jitify": self.jitify,
            "arg_types": self.arg_types, "name_expressions": self._names,
        }  # fmt: skip

    def __setstate__(self, state: dict[str, Any]) -> None:
        _unpickle_check(state, "RawKernel")
        self.code, self.name, self.options = state["code"], state["name"], tuple(state["options"])
        self.backend, self.jitify = state["backend"], state["jitify"]
        self.translate_cucomplex = state["translate_cucomplex"]
        self.enable_cooperative_groups = state["enable_cooperative_groups"]
        self.arg_types, self._names = state["arg_types"], state["name_expressions"]
        self.device = None  # follows its arrays, as a kernel made without device= does
        self._setup()

    def __repr__(self) -> str:
        return f"<cubehip.RawKernel {self.name}>"


class _KernelOf:
    """What ``RawKernel.kernel`` gives: the RawKernel's compiled kernel, called either as
    cubehip's ``kernel(block, shared_mem, *, cooperative=None)`` (the Kernel for that
    launch shape) or as CuPy's Function ``kernel(grid, block, args, shared_mem=0,
    stream=None, enable_cooperative_groups=False)`` (a launch). The two are told apart by
    their arguments: CuPy's has three or more, or grid= or args=; cubehip's at most two."""

    __slots__ = ("_raw", "_default")

    def __init__(self, raw: RawKernel, default: Kernel) -> None:
        self._raw, self._default = raw, default

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) >= 3 or "args" in kwargs or "grid" in kwargs:
            return self._launch(*args, **kwargs)
        return self._raw._kernel(*args, **kwargs)

    def _launch(self, grid: Any, block: Any, args: Sequence[Any], shared_mem: int = 0, stream: Any = None,
                enable_cooperative_groups: bool = False) -> None:
        self._raw(grid, block, args, shared_mem=shared_mem, stream=stream,
                  enable_cooperative_groups=enable_cooperative_groups)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._default, attr)

    def __repr__(self) -> str:
        return f"<cubehip.RawKernel.kernel of {self._raw.name}: {self._default!r}>"


def _read_module_file(path: str) -> tuple[bool, bytes]:
    """The module of the file at path as ``cubehip_module_load_file`` reads it, without
    making one: (True, its text) for a source file, (False, its code) for compiled code, a
    kernel cache entry unsealed and checked by the library, which alone reads that format
    (InvalidArgument, a ValueError, for a damaged, truncated or renamed one)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, "no such module file", path)
    is_source, n = ctypes.c_int32(), ctypes.c_size_t()
    check(_ffi.lib.cubehip_module_file_read(path.encode(), ctypes.byref(is_source), None, 0, ctypes.byref(n)),
          "cubehip_module_file_read")
    buf = ctypes.create_string_buffer(max(n.value, 1))
    check(_ffi.lib.cubehip_module_file_read(path.encode(), ctypes.byref(is_source), buf, n.value, ctypes.byref(n)),
          "cubehip_module_file_read")
    return bool(is_source.value), buf.raw[: n.value]


class _CodeFunction:
    """A kernel of a compiled module (RawModule(path=...) of a compiled file), called as a
    RawKernel: ``f(grid, block, args, shared_mem=0, stream=None)``. Compiled code declares
    nothing, so each array argument is taken as read and written (a failed launch then
    fails every array it was given, which fails closed) and each scalar by its numpy type
    (np.int32(n), np.float32(a)); one cubehip Kernel per launch shape and array count."""

    def __init__(self, code: bytes, name: str, device: Any, cooperative: bool) -> None:
        self._code, self.name, self.device, self._coop = code, name, device, cooperative
        self._kernels: dict[tuple[Any, ...], Kernel] = {}
        self._make((1,), 0, 0)  # the symbol is looked up here, as get_function compiles

    def _make(self, block: Any, shared_mem: int, narrays: int) -> Kernel:
        key = (_dim3(block, "block"), shared_mem, narrays)
        k = self._kernels.get(key)
        if k is None:
            k = Kernel("", self.name, block=key[0], shared_mem=shared_mem, io=["rw"] * narrays,
                       device=self.device, cooperative=self._coop, code=self._code)
            self._kernels[key] = k
        return k

    def __call__(self, grid: Any, block: Any, args: Sequence[Any], *, shared_mem: int = 0, stream: Any = None) -> None:
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"{self.name}: args must be a tuple or list of the kernel's arguments, not {type(args).__name__}")
        n = sum(1 for a in args if isinstance(a, DeviceArray))
        self._make(block, shared_mem, n)(grid, *args, stream=stream)


class RawModule:
    """CuPy's RawModule: ``RawModule(code=None, *, path=None, options=(), backend="nvrtc",
    translate_cucomplex=False, enable_cooperative_groups=False, name_expressions=None,
    jitify=False, device=None)``; ``get_function(name)`` is a RawKernel of the module.

    The module is one on the device: compiled once, its kernels sharing its ``__device__``
    and ``__constant__`` variables. name_expressions are the C++ kernels its compile
    resolves, as CuPy's (hiprtc's and NVRTC's name expressions): a template's specialization
    (``"reduce<float, 256>"``), a C++-linkage kernel, an overload picked by a cast;
    ``get_function`` takes each by that expression, and an ``extern "C"`` kernel by its
    name. ``compile()`` and ``get_function`` compile (CompileError there). translate_cucomplex
    is RawKernel's. path is a file: a source file (.hip, .cu, .cpp, .cc, .cxx, .cuh, .h,
    .hpp) is read as code; any other is compiled code, loaded as it is (the file ``cubehip
    compile -o DIR`` writes for a device, an AMD code object, a cubin, PTX or fatbin on
    nvidia), whose kernels take each array as read and written and each scalar by its numpy
    type (np.int32(n)). backend and jitify are accepted and ignored. It pickles as what it
    was made with, as a RawKernel does.
    """

    def __init__(
        self,
        code: str | None = None,
        *,
        path: str | None = None,
        options: Sequence[str] = (),
        backend: str = "nvrtc",
        translate_cucomplex: bool = False,
        enable_cooperative_groups: bool = False,
        name_expressions: Sequence[str] | None = None,
        jitify: bool = False,
        device: Any = None,
    ) -> None:
        self._binary: bytes | None = None
        if path is not None:
            if code is not None:
                raise TypeError("give code or path, not both")
            is_source, data = _read_module_file(os.fspath(path))
            if is_source:
                code = data.decode()
            else:
                # Compiled code, kept to load on each device and to pickle with the module.
                self._binary = data
                code = ""
        if not isinstance(code, str):
            raise TypeError(f"code must be the module's source (a str), not {type(code).__name__}")
        _check_backend(backend)
        self.code = code
        self.translate_cucomplex = bool(translate_cucomplex)
        self.enable_cooperative_groups = bool(enable_cooperative_groups)
        self.options = _options(options)
        self.backend, self.jitify = backend, jitify
        self.device = device
        self.name_expressions = None if name_expressions is None else tuple(name_expressions)
        for n in self.name_expressions or ():
            if not isinstance(n, str) or not n.strip():
                raise ValueError(f"name_expressions must be non-empty strings, not {n!r}")
        self._functions: dict[str, RawKernel] = {}

    def get_function(self, name: str) -> RawKernel:
        """The module's kernel name, an ``extern "C"`` name or one of its name_expressions
        (one RawKernel per name), compiled here: CompileError for a name the module lacks.
        Of a compiled module (path= a compiled file), it is the kernel of that symbol,
        loaded here (CubehipError for a symbol the code lacks)."""
        k = self._functions.get(name)
        if k is None and self._binary is not None:
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"a kernel's name must be a non-empty str, not {name!r}")
            k = _CodeFunction(self._binary, name, self.device, self.enable_cooperative_groups)
            self._functions[name] = k  # type: ignore[assignment]
            return k  # type: ignore[return-value]
        if k is None:
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"a kernel's name must be a non-empty str, not {name!r}")
            k = RawKernel(self.code, name, self.options, self.backend, self.translate_cucomplex, device=self.device,
                          enable_cooperative_groups=self.enable_cooperative_groups,
                          name_expressions=self.name_expressions)
            # Compiled here, as CuPy's get_function does: a name the module lacks, or a
            # source or option that does not compile, raises CompileError now, not at the
            # first launch (the module is compiled once whichever kernel asks).
            k._kernel()
            self._functions[name] = k
        return k

    def compile(self, log_stream: Any = None) -> None:
        """Compiles the module now (CuPy's ``compile(log_stream=None)``), on its device (else
        the current one): CompileError for a source or option that does not compile, or a
        name expression the source does not resolve. log_stream (a text stream) receives
        the compiler's log; cubehip keeps the log of a failed compile only. Its kernels,
        from get_function, are of the module compiled here."""
        _check_log_stream(log_stream)
        dev = self.device if self.device is not None else current_device()
        mod = self._module(dev)
        try:
            st = _ffi.lib.cubehip_module_compile(mod.value)
            if st == _ffi.ERROR_COMPILE:
                err = error(st, "cubehip_module_compile")
                log = _string(_ffi.lib.cubehip_module_log, mod.value, "cubehip_module_log")
                _write_log(log_stream, log)
                raise CompileError(st, err.message, "cubehip_module_compile", log, self.code, self.options)
            check(st, "cubehip_module_compile")
        finally:
            # The device keeps the compiled module (one per source, options and name
            # expressions): the kernels get_function makes are of it.
            _ffi.lib.cubehip_module_destroy(mod.value)

    def _module(self, dev: Any) -> ctypes.c_uint64:
        """A library handle of the module on dev (the caller destroys it: the device keeps
        the module itself, one per source, options and name expressions)."""
        md = _ffi.ModuleDesc()
        md.size = ctypes.sizeof(md)
        mod = ctypes.c_uint64()
        if self._binary is not None:
            code = ctypes.create_string_buffer(self._binary, len(self._binary))
            md.code, md.code_size = ctypes.cast(code, ctypes.c_void_p), len(self._binary)
            check(_ffi.lib.cubehip_module_create(dev._live(), ctypes.byref(md), ctypes.byref(mod)), "cubehip_module_create")
            return mod
        source = translate_cucomplex(self.code) if self.translate_cucomplex else self.code
        md.source = source.encode()
        opts = (ctypes.c_char_p * max(len(self.options), 1))(*[o.encode() for o in self.options])
        md.options, md.option_count = opts, len(self.options)
        exprs = self.name_expressions or ()
        names = (ctypes.c_char_p * max(len(exprs), 1))(*[n.encode() for n in exprs])
        md.name_expressions, md.name_count = (names, len(exprs)) if self.name_expressions is not None else (None, 0)
        check(_ffi.lib.cubehip_module_create(dev._live(), ctypes.byref(md), ctypes.byref(mod)), "cubehip_module_create")
        return mod

    def get_global(self, name: str) -> DeviceArray:
        """The module's ``__device__`` or ``__constant__`` variable name as a device array of
        its bytes (uint8, one dimension), over the variable's own memory on the module's
        device (else the current one): what the module's kernels read, written by
        ``set``, read by ``get``, passed to kernels, ``.view(np.float32)`` for its elements.
        CuPy returns a MemoryPointer to the same memory. The variable lives as long as the
        device; releasing the array frees nothing. The module is compiled first if it was
        not (CompileError), an unknown name raises CubehipError (hipErrorNotFound)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a variable's name must be a non-empty str, not {name!r}")
        dev = self.device if self.device is not None else current_device()
        mod = self._module(dev)
        try:
            buf = ctypes.c_uint64()
            check(_ffi.lib.cubehip_module_global_buffer(mod.value, 0, name.encode(), ctypes.byref(buf)),
                  "cubehip_module_global_buffer")
        finally:
            _ffi.lib.cubehip_module_destroy(mod.value)
        size = ctypes.c_uint64()
        st = _ffi.lib.cubehip_buffer_size(buf.value, ctypes.byref(size))
        if st:
            _ffi.lib.cubehip_buffer_release(buf.value)
            check(st, "cubehip_buffer_size")
        a = DeviceArray.__new__(DeviceArray)
        a._h, a._base, a._exports, a._import = buf.value, None, 0, True  # imported: never kept for reuse
        a.device, a.shape, a.dtype, a.stream, a.nbytes = dev, (size.value,), np.dtype(np.uint8), 0, size.value
        return a

    def __getstate__(self) -> dict[str, Any]:
        return {
            "cubehip_pickle": _PICKLE_VERSION, "code": self.code, "options": self.options, "backend": self.backend,
            "translate_cucomplex": self.translate_cucomplex, "enable_cooperative_groups": self.enable_cooperative_groups,
            "name_expressions": self.name_expressions, "jitify": self.jitify, "binary": self._binary,
        }  # fmt: skip

    def __setstate__(self, state: dict[str, Any]) -> None:
        _unpickle_check(state, "RawModule")
        self.code, self.options, self.backend = state["code"], tuple(state["options"]), state["backend"]
        self.translate_cucomplex = state["translate_cucomplex"]
        self.enable_cooperative_groups = state["enable_cooperative_groups"]
        self.name_expressions, self.jitify = state["name_expressions"], state["jitify"]
        self.device = None  # its kernels follow their arrays, as kernels made without device= do
        self._binary = state.get("binary")  # a compiled module's code (absent before path=)
        self._functions = {}

    def __repr__(self) -> str:
        return f"<cubehip.RawModule {len(self._functions)} functions>"
