"""CuPy's raw-kernel API over cubehip kernels: RawKernel and RawModule take CuPy's
constructor keywords and are called as CuPy's are, ``k(grid, block, args, shared_mem=0,
stream=None)``, so that a script of raw kernels switches by changing its import.

cubehip fixes a kernel's block and dynamic shared memory when it makes it (they are part of
what the library plans a launch with), where CuPy takes them per call: a RawKernel keeps one
cubehip Kernel per (block, shared_mem) it is called with, made on its first call with them.
A call with a shape seen before costs one dictionary lookup more than a Kernel's call.
"""

from __future__ import annotations

from typing import Any, Sequence

from ._kernel import Kernel, _dim3, _plain_grid

# CuPy's compiler choices; cubehip compiles with the platform's own compiler (hipcc, nvcc
# through hiprtc/nvrtc, g++ on the cpu device) whichever is named, so they are accepted and
# have no effect.
_BACKENDS = ("nvrtc", "nvcc", "hiprtc", "hipcc")


def _options(options: Any) -> tuple[str, ...]:
    if isinstance(options, str):
        return (options,)
    return tuple(options)


def _refuse_unsupported(translate_cucomplex: bool, backend: str) -> None:
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(_BACKENDS)} (cubehip ignores it), not {backend!r}")
    if translate_cucomplex:
        raise NotImplementedError("translate_cucomplex: cubehip does not rewrite cuComplex; use HIP's hipComplex or your own struct")


class RawKernel:
    """CuPy's RawKernel: ``RawKernel(code, name, options=(), backend="nvrtc",
    translate_cucomplex=False, *, enable_cooperative_groups=False, jitify=False,
    device=None)``, called as ``k(grid, block, args, shared_mem=0, stream=None)``.

    code is HIP C++ with a ``__global__`` function name: an ``extern "C"`` name, or a C++
    name expression (``"reduce<float, 256>"``, a C++-linkage kernel's name). backend and jitify are
    accepted and ignored (cubehip compiles with the platform's compiler, and reads parameter
    types from the declaration itself). enable_cooperative_groups launches it cooperatively
    (hipModuleLaunchCooperativeKernel, as CuPy's cuLaunchCooperativeKernel): every block of
    the grid runs at once, so that blocks may wait for each other at cooperative groups'
    ``this_grid().sync()``; a grid over what the device holds at once raises CubehipError
    hipErrorCooperativeLaunchTooLarge, naming the limit (see
    ``Kernel.max_active_blocks_per_multiprocessor``). Like CuPy, it compiles on its first call: a
    CompileError is raised there. args is a tuple (or list) of device arrays, numpy scalars
    (``np.float32(a)``, ``np.int32(n)``) and Python numbers, each converted to its parameter's
    C type by the rules of cubehip.Kernel. Without device=, the kernel goes to the device of
    the arrays it is launched with.
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
        _refuse_unsupported(translate_cucomplex, backend)
        self.code, self.name = code, name
        self.enable_cooperative_groups = bool(enable_cooperative_groups)
        self.options = _options(options)
        self.backend, self.jitify = backend, jitify
        self.device = device
        self.arg_types = arg_types
        # (block, shared_mem) as given -> the Kernel made for that launch shape.
        self._kernels: dict[tuple[Any, int], Kernel] = {}

    def kernel(self, block: Any = (256,), shared_mem: int = 0, *, cooperative: bool | None = None) -> Kernel:
        """The cubehip Kernel this RawKernel launches with for block and shared_mem (made,
        and compiled, on first use): cubehip's own call convention, ``k(grid, *args)``.
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
            k = Kernel(self.code, self.name, block=dims, shared_mem=shared_mem, options=self.options,
                       device=self.device, arg_types=self.arg_types, cooperative=coop, name_expressions=self._names)
            self._kernels[(dims, shared_mem, *tag)] = k
        if _plain_grid(block):  # an int or a tuple of ints cannot change: remembered as given
            self._kernels[(block, shared_mem, *tag)] = k
        return k

    def __call__(self, grid: Any, block: Any, args: Sequence[Any], *, shared_mem: int = 0, stream: Any = None,
                 enable_cooperative_groups: bool = False) -> None:
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"{self.name}: args must be a tuple or list of the kernel's arguments, not {type(args).__name__}")
        if enable_cooperative_groups and not self.enable_cooperative_groups:
            k = self.kernel(block, shared_mem, cooperative=True)
        else:
            try:
                k = self._kernels[(block, shared_mem)]
            except (KeyError, TypeError):
                k = self.kernel(block, shared_mem)
        k(grid, *args, stream=stream)

    def compile(self, block: Any = (256,), shared_mem: int = 0) -> None:
        """Compiles now (for that launch shape) rather than on the first call."""
        self.kernel(block, shared_mem)

    def __repr__(self) -> str:
        return f"<cubehip.RawKernel {self.name}>"


class RawModule:
    """CuPy's RawModule: ``RawModule(code=None, *, path=None, options=(), backend="nvrtc",
    translate_cucomplex=False, enable_cooperative_groups=False, name_expressions=None,
    jitify=False, device=None)``; ``get_function(name)`` is a RawKernel of the module.

    The module is one on the device: compiled once, its kernels sharing its ``__device__``
    and ``__constant__`` variables. name_expressions are the C++ kernels its compile
    resolves, as CuPy's (hiprtc's and NVRTC's name expressions): a template's specialization
    (``"reduce<float, 256>"``), a C++-linkage kernel, an overload picked by a cast;
    ``get_function`` takes each by that expression, and an ``extern "C"`` kernel by its
    name. path (a compiled cubin, PTX or code object in CuPy) is refused: cubehip compiles
    HIP source. backend and jitify are accepted and ignored.
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
        if path is not None:
            raise NotImplementedError("path: cubehip compiles HIP source, not compiled modules; pass code=open(path).read() for a source file")
        if not isinstance(code, str):
            raise TypeError(f"code must be the module's source (a str), not {type(code).__name__}")
        _refuse_unsupported(translate_cucomplex, backend)
        self.code = code
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
        (one RawKernel per name), compiled here: CompileError for a name the module lacks."""
        k = self._functions.get(name)
        if k is None:
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"a kernel's name must be a non-empty str, not {name!r}")
            k = RawKernel(self.code, name, self.options, self.backend, device=self.device,
                          enable_cooperative_groups=self.enable_cooperative_groups,
                          name_expressions=self.name_expressions)
            # Compiled here, as CuPy's get_function does: a name the module lacks, or a
            # source or option that does not compile, raises CompileError now, not at the
            # first launch (the module is compiled once whichever kernel asks).
            k.kernel()
            self._functions[name] = k
        return k

    def __repr__(self) -> str:
        return f"<cubehip.RawModule {len(self._functions)} functions>"



