"""Kernels: HIP C++ source compiled for a device, launched with numpy-typed arguments.

Launching is the hot path. With the package's extension (cubehip._native), a kernel whose
declaration gives every parameter's kind is called as a built-in function of the
extension, which packs the arguments and launches in C; everything else (and everything
without the extension) goes through Kernel.__call__, which packs the kernel's
``cubehip_arg`` array in Python and launches through ctypes.
"""

from __future__ import annotations

import ctypes
import operator
import re
import threading
import weakref
from typing import Any, Sequence

import numpy as np

from . import _ffi
from . import _pointer
from ._array import DeviceArray
from ._current import current_device
from ._errors import CompileError, InvalidArgument, check, error
from ._stream import Stream, _string, stream_id

_launch = _ffi.fast_launch

# C parameter types, after qualifiers are dropped, and the argument kind each is passed as.
_C_TYPES: dict[str, str] = {}
for _kind, _names in {
    "i8": ["char", "signed char", "int8_t"],
    "u8": ["unsigned char", "uint8_t", "uchar", "bool"],
    "i16": ["short", "short int", "signed short", "signed short int", "int16_t"],
    "u16": ["unsigned short", "unsigned short int", "uint16_t", "ushort"],
    "i32": ["int", "signed", "signed int", "int32_t"],
    "u32": ["unsigned", "unsigned int", "uint32_t", "uint"],
    "i64": ["long", "long int", "long long", "long long int", "signed long", "signed long long", "int64_t", "ssize_t",
            "ptrdiff_t", "intptr_t"],
    "u64": ["unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int", "uint64_t", "size_t",
            "uintptr_t", "ulong", "ullong"],
    "f32": ["float"],
    "f64": ["double"],
}.items():
    for _n in _names:
        _C_TYPES[_n] = _kind

_KIND_CODE = {
    "i8": _ffi.ARG_I8, "u8": _ffi.ARG_U8, "i16": _ffi.ARG_I16, "u16": _ffi.ARG_U16,
    "i32": _ffi.ARG_I32, "u32": _ffi.ARG_U32, "i64": _ffi.ARG_I64, "u64": _ffi.ARG_U64,
    "f32": _ffi.ARG_F32, "f64": _ffi.ARG_F64,
}  # fmt: skip
_DTYPE_KIND = {
    np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8", np.dtype(np.int16): "i16", np.dtype(np.uint16): "u16",
    np.dtype(np.int32): "i32", np.dtype(np.uint32): "u32", np.dtype(np.int64): "i64", np.dtype(np.uint64): "u64",
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.bool_): "u8",
}  # fmt: skip
_INT_RANGE = {
    "i8": (-(2**7), 2**7 - 1), "u8": (0, 2**8 - 1), "i16": (-(2**15), 2**15 - 1), "u16": (0, 2**16 - 1),
    "i32": (-(2**31), 2**31 - 1), "u32": (0, 2**32 - 1), "i64": (-(2**63), 2**63 - 1), "u64": (0, 2**64 - 1),
}  # fmt: skip
_ACCESS = {
    "r": _ffi.ACCESS_READ, "read": _ffi.ACCESS_READ, "in": _ffi.ACCESS_READ,
    "w": _ffi.ACCESS_WRITE, "write": _ffi.ACCESS_WRITE, "out": _ffi.ACCESS_WRITE,
    "rw": _ffi.ACCESS_READ_WRITE, "read_write": _ffi.ACCESS_READ_WRITE, "inout": _ffi.ACCESS_READ_WRITE,
}  # fmt: skip

# The numpy scalars the extension's launch takes as values, as Kernel.__call__ does (an
# integer for an integer parameter, float32 or float64 for a float one; anything else, a
# bool included, goes to Kernel.__call__).
_NUMPY_INTS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)
_NUMPY_FLOATS = (np.float32, np.float64)

_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "__global__", "register"}

# What a pointer parameter's elements are, for the check of the array given there: their
# class ("i" an integer, "f" floating point, "bf16" bfloat16), their width in bytes, and
# whether a complex array of that float fits (a pair of floats: float2, hipFloatComplex).
# Signed and unsigned of one width are one class, as the Go side's rule has it (an int*
# takes a uint32 array, as C++ lets it alias one). A byte type (char, int8_t, bool), void,
# a struct, a typedef or a template parameter is not here: its pointer takes any array.
_ELEMS: dict[str, tuple[str, int, bool]] = {}
for _n, _kind in _C_TYPES.items():
    if _kind[1:] != "8":
        _ELEMS[_n] = ("f" if _kind[0] == "f" else "i", int(_kind[1:]) // 8, False)
for _n in ("half", "__half", "_Float16", "__fp16", "half2", "__half2"):
    _ELEMS[_n] = ("f", 2, False)
for _n in ("__hip_bfloat16", "hip_bfloat16", "__nv_bfloat16", "__bf16", "__hip_bfloat162", "__nv_bfloat162"):
    _ELEMS[_n] = ("bf16", 2, False)
for _base, (_cls, _width) in {
    "short": ("i", 2), "ushort": ("i", 2), "int": ("i", 4), "uint": ("i", 4), "long": ("i", 8), "ulong": ("i", 8),
    "longlong": ("i", 8), "ulonglong": ("i", 8), "float": ("f", 4), "double": ("f", 8),
}.items():  # fmt: skip
    for _lanes in (1, 2, 3, 4):
        # An even number of float lanes is a row of complex numbers too (CuPy's callers pass
        # complex64 arrays to float2* parameters).
        _ELEMS[f"{_base}{_lanes}"] = (_cls, _width, _cls == "f" and _lanes % 2 == 0)
for _n in ("hipFloatComplex", "hipComplex", "cuFloatComplex", "cuComplex"):
    _ELEMS[_n] = ("f", 4, True)
for _n in ("hipDoubleComplex", "cuDoubleComplex"):
    _ELEMS[_n] = ("f", 8, True)
_POINTERS = ("i", 8, False)  # a pointer to pointers: an array of addresses

# The dtypes numpy hands out as one object each, which the extension's launch compares a
# DeviceArray's dtype with by identity; any other dtype object goes to Kernel.__call__,
# which judges it by _elem_takes.
_COMMON_DTYPES = tuple(
    {id(d): d for d in map(np.dtype, (
        np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
        np.longlong, np.ulonglong, np.float16, np.float32, np.float64, np.complex64, np.complex128,
    ))}.values()
)  # fmt: skip


def _elem_takes(elem: tuple[str, int, bool], dt: np.dtype) -> bool:
    """Whether a pointer to elem takes an array of dtype dt. A byte-swapped dtype never does:
    the kernel would read its numbers with their bytes reversed."""
    cls, width, complex_ok = elem
    if not dt.isnative:
        return False
    kind, size = dt.kind, dt.itemsize
    if cls == "f":
        return kind == "f" and size == width or complex_ok and kind == "c" and size == 2 * width
    if cls == "i":
        return kind in "iu" and size == width
    # bfloat16 has no numpy dtype: its bits come as a 2-byte integer array, or as the
    # bfloat16 dtype of ml_dtypes (or another library's of that name).
    return size == 2 and (kind in "iu" or dt.name == "bfloat16")


def _elem_wants(elem: tuple[str, int, bool]) -> str:
    """The dtypes a pointer to elem takes, for messages: "float32", "int32 or uint32"."""
    cls, width, complex_ok = elem
    bits = 8 * width
    if cls == "f":
        return f"float{bits}" + (f" or complex{2 * bits}" if complex_ok else "")
    if cls == "i":
        return f"int{bits} or uint{bits}"
    return "bfloat16: its bits as uint16 or int16, or ml_dtypes.bfloat16"


def _elem_view(elem: tuple[str, int, bool]) -> str:
    """The dtype to view an array as to pass its bytes to a pointer to elem."""
    cls, width, _ = elem
    return f"np.float{8 * width}" if cls == "f" else f"np.uint{8 * width}"


def _elem_of(decl: str) -> tuple[str, int, bool] | None:
    """The element of the pointer declared by decl ("const float* x", "float y[]", "T* p"),
    or None where any array goes (void, bytes, a type the declaration does not say)."""
    star = decl.find("*") if "*" in decl else decl.find("[")
    if star < 0:
        return None
    # "float** p" and "float* p[]" take addresses; "float a[][4]" still takes floats.
    if decl.count("*") + ("[" in decl) > 1:
        return _POINTERS
    words = [w for w in re.findall(r"[A-Za-z_]\w*|::", decl[:star]) if w not in _QUALIFIERS]
    if "*" not in decl and len(words) > 1:
        words = words[:-1]  # "float y[]": y is the name
    ctype = " ".join(words).replace("std :: ", "").replace(":: ", "")
    return _ELEMS.get(ctype)


class Param:
    """One kernel parameter: a buffer (with the access the kernel declares) or a scalar kind.

    elem is what a buffer's elements are, (class, width, complex arrays fit), as the
    declaration says it; None where the pointer takes an array of any dtype."""

    __slots__ = ("name", "kind", "readonly", "text", "elem")

    def __init__(self, name: str, kind: str | None, readonly: bool = False, text: str = "",
                 elem: tuple[str, int, bool] | None = None) -> None:
        self.name = name
        self.kind = kind  # "buffer", a scalar kind ("f32", ...), or None when not known
        self.readonly = readonly
        self.text = text
        self.elem = elem

    def __repr__(self) -> str:
        return f"Param({self.text or self.name!r}: {self.kind})"


def _strip_comments(src: str) -> str:
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", " ", src)


def _split_top(s: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in s:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _cast_params(entry: str) -> list[Param] | None:
    """The parameter list of a cast that picks one overload, ``(void(*)(float*, int))twice``:
    its types, without names; None when entry is no such cast."""
    e = entry.strip()
    if not e.startswith("("):
        return None
    depth = 0
    for end, c in enumerate(e):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0:
            break
    else:
        return None
    cast = e[1:end].strip()  # void(*)(float*, int)
    if not cast.endswith(")") or "(" not in cast:
        return None
    inner = cast[cast.rfind("(") + 1 : -1].strip()
    if inner in ("", "void"):
        return []
    return [_parse_param(p.strip(), k) for k, p in enumerate(_split_top(inner))]


def declared_name(entry: str) -> str:
    """The function a name expression names, for reading its declaration: ``reduce<float,
    256>`` is reduce, ``ns::scale`` scale, a cast's operand its name; "" where it cannot tell."""
    e = entry.strip()
    if e.startswith("("):
        depth = 0
        for i, c in enumerate(e):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0:
                e = e[i + 1 :].strip()
                break
    e = e.lstrip("&").split("<", 1)[0].rsplit("::", 1)[-1].strip()
    return e if re.fullmatch(r"[A-Za-z_]\w*", e) else ""


def parse_params(source: str, entry: str) -> list[Param] | None:
    """The parameters of the ``__global__`` function entry in source, or None when its
    declaration cannot be read (built by a macro, an overloaded name without a cast): then
    each call's arguments say their own types. entry may be a C++ name expression: a
    template's specialization (its parameters of a template type take any array), a
    qualified name, a cast that picks an overload (the cast's own parameters)."""
    cast = _cast_params(entry)
    if cast is not None:
        return cast
    name = declared_name(entry)
    if not name:
        return None
    src = _strip_comments(source)
    found: list[list[Param]] = []
    for m in re.finditer(r"\b" + re.escape(name) + r"\s*\(", src):
        head = src[max(0, m.start() - 300) : m.start()]
        decl_start = max(head.rfind(";"), head.rfind("}"))
        if "__global__" not in head[decl_start + 1 :]:
            continue
        depth, i = 1, m.end()
        while i < len(src) and depth:
            depth += {"(": 1, ")": -1}.get(src[i], 0)
            i += 1
        if depth:
            return None
        inner = src[m.end() : i - 1].strip()
        found.append([] if inner in ("", "void") else [_parse_param(p.strip(), k) for k, p in enumerate(_split_top(inner))])
    if not found:
        return None
    # A declaration and its definition are one kernel; overloads are the compiler's to tell
    # apart, by a cast.
    if any(_types(f) != _types(found[0]) for f in found[1:]):
        return None
    return found[0]


def _types(params: list[Param]) -> list[list[str]]:
    """The declared types of params, their names left out."""
    return [(re.sub(r"\b" + re.escape(p.name) + r"\b", "", p.text) if p.name else p.text).split() for p in params]


def _parse_param(text: str, index: int) -> Param:
    text = text.split("=")[0].strip()
    if "*" in text or "[" in text:
        star = text.find("*") if "*" in text else text.find("[")
        readonly = re.search(r"\bconst\b", text[:star]) is not None
        # The name follows the last '*' ("float* __restrict__ y") or precedes '[' ("float y[]").
        ids = re.findall(r"[A-Za-z_]\w*", text[text.rfind("*"):] if "*" in text else text[:star])
        ids = [i for i in ids if i not in _QUALIFIERS]
        if "*" not in text and len(ids) < 2:
            ids = []  # "float[]": only a type
        return Param(ids[-1] if ids else f"arg{index}", "buffer", readonly, text, _elem_of(text))
    words = [w for w in re.findall(r"[A-Za-z_]\w*|::", text) if w not in _QUALIFIERS]
    if "&" in text:
        return Param(words[-1] if words else f"arg{index}", None, False, text)
    name = f"arg{index}"
    if len(words) > 1 and " ".join(words) not in _C_TYPES:
        name = words.pop()
    ctype = " ".join(words).replace("std :: ", "").replace(":: ", "")
    return Param(name, _C_TYPES.get(ctype), False, text)


def _kind_of_type(t: Any) -> str:
    """A kind from an arg_types entry: "buffer", a kind name ("f32"), a C type name or a numpy dtype."""
    if isinstance(t, str):
        if t in ("buffer", "ptr", "pointer") or t.endswith("*"):
            return "buffer"
        if t in _KIND_CODE:
            return t
        if t in _C_TYPES:
            return _C_TYPES[t]
    try:
        dt = np.dtype(t)
    except TypeError:
        dt = None
    if dt is not None and dt in _DTYPE_KIND:
        return _DTYPE_KIND[dt]
    raise ValueError(f"arg_types: {t!r} is not 'buffer', a kind (i8..u64, f32, f64), a C type or a numpy scalar dtype")


# The C type each kind is declared as, for messages about a parameter given by arg_types
# (whose declaration the source does not spell out).
_KIND_CTYPE = {
    "i8": "signed char", "u8": "unsigned char", "i16": "short", "u16": "unsigned short",
    "i32": "int", "u32": "unsigned int", "i64": "long long", "u64": "unsigned long long",
    "f32": "float", "f64": "double", "buffer": "pointer (a buffer)",
}  # fmt: skip

# Finite doubles at or beyond this magnitude round to infinity as a float (FLT_MAX is
# 2**128 - 2**104; the halfway point to 2**128 rounds up, to infinity).
_F32_LIMIT = float(2**128 - 2**103)


def _param(kernel: "Kernel", i: int) -> tuple[str, str, str]:
    """Parameter i's name, declaration ("float a") and C type ("float"), for messages."""
    p = kernel.params[i] if kernel.params is not None and i < len(kernel.params) else None
    if p is None:
        return f"arg{i}", "an argument of a type the declaration does not say", "type"
    ctype = _KIND_CTYPE.get(p.kind or "", "type")
    if p.text:
        words = p.text.split()
        if p.kind != "buffer" and len(words) > 1 and words[-1] == p.name:
            ctype = " ".join(w for w in words[:-1] if w not in _QUALIFIERS)
        return p.name, p.text, ctype
    return p.name, f"{ctype} {p.name}" if p.kind != "buffer" else f"a pointer ({p.name})", ctype


def _given(v: Any) -> str:
    # Named as the Go side names an argument: its type ("float32", "int"), or "a buffer".
    return "a buffer" if isinstance(v, DeviceArray) else type(v).__name__


def _bad_arg(kernel: "Kernel", i: int, value: Any, want: str = "") -> TypeError:
    name, decl, _ = _param(kernel, i)
    hint = f" ({want})" if want else ""
    return TypeError(f"{kernel.entry}: argument {i} ({name}): {_given(value)} given, the kernel takes {decl}{hint}")


def _does_not_fit(kernel: "Kernel", i: int, v: Any) -> OverflowError:
    name, _, ctype = _param(kernel, i)
    # str, not repr: numpy 2 spells a scalar's repr np.int64(-5), its str -5.
    return OverflowError(f"{kernel.entry}: argument {i} ({name}): {type(v).__name__} {v} does not fit the kernel's {ctype}")


def _as_int(kernel: "Kernel", i: int, v: Any, kind: str) -> int:
    given = v
    if isinstance(v, (bool, np.bool_)):
        v = int(v)
    elif isinstance(v, np.integer):
        v = int(v)
    elif type(v) is not int:
        raise _bad_arg(kernel, i, v)
    lo, hi = _INT_RANGE[kind]
    if not lo <= v <= hi:
        raise _does_not_fit(kernel, i, given)
    return v


def _as_float(kernel: "Kernel", i: int, v: Any, kind: str) -> float:
    """v as a float or double parameter takes it. A float is rounded to the parameter's
    type (as C++ and CuPy convert it), but a finite one that would become infinity is
    refused; an integer must be held exactly (convert it to a float to say how to round)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise _bad_arg(kernel, i, v)
    if isinstance(v, (int, np.integer)):
        iv = int(v)
        f = float(iv) if -(2**1024) < iv < 2**1024 else float("inf")
        exact = f != float("inf") and int(f) == iv and (kind == "f64" or ctypes.c_float(f).value == f)
        if not exact:
            name, decl, ctype = _param(kernel, i)
            raise ValueError(
                f"{kernel.entry}: argument {i} ({name}): {type(v).__name__} {iv} given, the kernel takes {decl}, "
                f"which does not hold it exactly; pass a float to round it"
            )
        return f
    f = float(v)
    if kind == "f32" and not -_F32_LIMIT < f < _F32_LIMIT and f - f == 0:  # finite, beyond float's range
        raise _does_not_fit(kernel, i, v)
    return f


def _buffer(kernel: "Kernel", i: int, v: Any, p: Param | None, temps: list[Any]) -> tuple[int, int]:
    """A pointer argument as (buffer handle, byte offset): a DeviceArray of a dtype the
    pointer takes, or a raw pointer the device can name (_pointer.resolve)."""
    if isinstance(v, DeviceArray):
        if p is not None and p.elem is not None and not _elem_takes(p.elem, v.dtype):
            raise _bad_elem(kernel, i, v, p.elem)
        return v._live(), 0
    if isinstance(v, _pointer.MemoryPointer) and v.array.device is not kernel.device:
        # Kernel.__call__ follows it to its device, for a kernel made without device=.
        raise _OtherDevice(kernel, i, v)
    # A raw pointer carries no dtype, as CuPy's do not: its bytes are what the kernel reads.
    got = _pointer.resolve(kernel.device, v, temps)
    if got is None:
        raise _bad_arg(kernel, i, v, "a DeviceArray, a MemoryPointer (a.data), a device address as an int, "
                       "or an object with .ptr, .data.ptr or __cuda_array_interface__")
    if type(got[0]) is str:
        name, decl, _ = _param(kernel, i)
        raise ValueError(f"{kernel.entry}: argument {i} ({name}): {got[0]} given, the kernel takes {decl}; {got[1]}")
    return got  # type: ignore[return-value]


class _OtherDevice(ValueError):
    """A MemoryPointer into an array of another device than the kernel's."""

    def __init__(self, kernel: "Kernel", i: int, v: "_pointer.MemoryPointer") -> None:
        name, decl, _ = _param(kernel, i)
        self.device = v.array.device
        super().__init__(f"{kernel.entry}: argument {i} ({name}): a MemoryPointer given, the kernel takes {decl}; "
                         f"it points into an array of {self.device!r}, not of the kernel's {kernel.device!r}")


def _bad_elem(kernel: "Kernel", i: int, v: DeviceArray, elem: tuple[str, int, bool]) -> TypeError:
    name, decl, _ = _param(kernel, i)
    view = _elem_view(elem)
    return TypeError(
        f"{kernel.entry}: argument {i} ({name}): an array of {v.dtype} given, the kernel takes {decl} "
        f"({_elem_wants(elem)}); to pass the array's bytes as they are, pass a view: a.view({view})"
    )


# Function attributes by name, numbered as HIP's hipFunction_attribute (CUDA's too); the
# names are CuPy's keys of RawKernel.attributes.
FUNC_ATTRIBUTES = {
    "max_threads_per_block": 0, "shared_size_bytes": 1, "const_size_bytes": 2, "local_size_bytes": 3,
    "num_regs": 4, "ptx_version": 5, "binary_version": 6, "cache_mode_ca": 7,
    "max_dynamic_shared_size_bytes": 8, "preferred_shared_memory_carveout": 9,
}  # fmt: skip


def _func_attr(attr: str | int) -> int:
    if isinstance(attr, str) and attr in FUNC_ATTRIBUTES:
        return FUNC_ATTRIBUTES[attr]
    if isinstance(attr, int) and not isinstance(attr, bool) and attr in FUNC_ATTRIBUTES.values():
        return attr
    raise ValueError(f"unknown function attribute {attr!r}: one of {', '.join(FUNC_ATTRIBUTES)}")


class Kernel:
    """A kernel: HIP C++ source with an ``extern "C" __global__`` function entry.

    ``Kernel(source, entry, block=(256,), shared_mem=0, io=None, options=(), device=None,
    arg_types=None, cooperative=False)`` compiles at once (CompileError carries the
    compiler's log).

    - block: threads per block (an int or up to three ints).
    - shared_mem: dynamic shared memory per block, in bytes.
    - io: the access of each pointer parameter, in order ("r", "w" or "rw"); by default a
      ``const T*`` parameter is read and any other pointer read and written. A failure of a
      launch is carried by the arrays it writes.
    - options: compiler options ("-DN=4", "-O3").
    - arg_types: the kind of every parameter ("buffer", "f32", "u32", ..., C type names or
      numpy dtypes), for a kernel whose declaration the source does not spell out (a macro).
      By default the kinds are read from the source's declaration of entry. A pointer entry
      says its element type as a declaration does ("float*" takes float32 arrays); "buffer"
      or "void*" takes an array of any dtype.
    - cooperative: launch it cooperatively (hipModuleLaunchCooperativeKernel): every block of
      the grid runs at once, so that blocks may wait for each other at cooperative groups'
      ``this_grid().sync()``, valid only in such a launch. A grid of more blocks than the
      device holds at once (``max_active_blocks_per_multiprocessor()`` times the device's
      ``multiprocessor_count``) raises CubehipError hipErrorCooperativeLaunchTooLarge, naming
      the limit, and queues nothing. On the cpu device, ``this_grid().sync()`` in a kernel
      launched without it fails that launch, naming it (CarriedFailure on the next read).

    Call it with the grid and the arguments in the kernel's order:
    ``k(grid, x, y, np.float32(2), n, stream=s)``. Device arrays pass as pointers, each of a
    dtype its pointer's declared element type takes (the same width, and both integers or
    both floating point: an ``int*`` takes int32 or uint32, a ``float2*`` float32 or
    complex64; ``void*``, byte pointers and types the declaration cannot say take any), else
    a TypeError naming the parameter; ``a.view(np.float32)`` passes an array's bytes as they
    are. Python numbers and numpy scalars are converted to the parameter's C type (a value
    that does not fit is an OverflowError).
    """

    def __init__(
        self,
        source: str,
        entry: str,
        block: int | Sequence[int] = (256,),
        shared_mem: int = 0,
        io: Sequence[str] | None = None,
        options: Sequence[str] = (),
        device: Any = None,
        arg_types: Sequence[Any] | None = None,
        compile: bool = True,
        cooperative: bool = False,
        name_expressions: Sequence[str] | None = None,
        *,
        code: bytes | None = None,
    ) -> None:
        self._h = 0
        # A kernel of a module of compiled code (RawModule(path=...) of a compiled file):
        # source is then "", and io must be given for its buffers (no declaration to read).
        self._code = None if code is None else bytes(code)
        # The C++ name expressions the kernel's module resolves (RawModule's): with them, the
        # kernel is made from that module, so it shares the variables of every kernel made with
        # the same source, options and expressions. Without them an entry that is a name
        # expression is resolved alone.
        self.name_expressions = None if name_expressions is None else tuple(name_expressions)
        if self.name_expressions is not None and not all(isinstance(n, str) and n for n in self.name_expressions):
            raise TypeError("name_expressions must be non-empty strings")
        self.cooperative = bool(cooperative)
        # A kernel made without device= follows the arrays it is launched with (see _retry):
        # it starts on the current device and moves to the arrays' device on a launch.
        self._implicit = device is None
        self._base_class = type(self)
        self.device = device if device is not None else current_device()
        if not isinstance(source, str) or not isinstance(entry, str):
            raise TypeError("source and entry must be str")
        if not entry:
            raise ValueError("entry is empty")
        self.source, self.entry = source, entry
        self.block = _dim3(block, "block")
        if not isinstance(shared_mem, int) or not 0 <= shared_mem < 2**32:
            raise ValueError(f"shared_mem must be an int in [0, 2**32), not {shared_mem!r}")
        self.shared_mem = shared_mem
        self.options = tuple(options) if not isinstance(options, str) else (options,)
        if not all(isinstance(o, str) for o in self.options):
            raise TypeError("options must be strings")

        params = parse_params(source, entry)
        if arg_types is not None:
            arg_types = list(arg_types)
            kinds = [_kind_of_type(t) for t in arg_types]
            # A pointer entry says its element as a declaration does ("float*" takes float32
            # arrays); "buffer" or "void*" takes an array of any dtype.
            elems = [_elem_of(t) if isinstance(t, str) and k == "buffer" else None for t, k in zip(arg_types, kinds)]
            if params is not None and len(params) != len(kinds):
                raise ValueError(f"arg_types has {len(kinds)} entries, {entry} declares {len(params)} parameters")
            if params is None:
                params = [Param(f"arg{i}", k, elem=e) for i, (k, e) in enumerate(zip(kinds, elems))]
            else:
                for p, k, e in zip(params, kinds, elems):
                    p.kind, p.elem = k, e
        self.params: list[Param] | None = params

        nbuf = sum(1 for p in params if p.kind == "buffer") if params is not None else None
        if io is not None:
            io = [io] if isinstance(io, str) else list(io)
            try:
                access = [_ACCESS[a] for a in io]
            except (KeyError, TypeError):
                raise ValueError(f"io entries must be 'r', 'w' or 'rw', not {io!r}") from None
            if nbuf is not None and len(access) != nbuf:
                raise ValueError(f"io has {len(access)} entries, {entry} has {nbuf} pointer parameters")
        elif params is not None:
            access = [_ffi.ACCESS_READ if p.readonly else _ffi.ACCESS_READ_WRITE for p in params if p.kind == "buffer"]
        else:
            access = []
        self.io = tuple(access)
        self._h = self._create(self.device)
        self._plan()
        if compile:
            self.compile()

    def _create(self, device: Any) -> int:
        """The library's kernel for device, from the kernel's description."""
        access = self.io
        d = _ffi.KernelDesc()
        d.size = ctypes.sizeof(d)
        d.entry = self.entry.encode()
        d.block[:] = self.block
        d.shared_mem = self.shared_mem
        acc = (ctypes.c_int32 * max(len(access), 1))(*access)
        d.access, d.access_count = acc, len(access)
        opts = (ctypes.c_char_p * max(len(self.options), 1))(*[o.encode() for o in self.options])
        d.flags = _ffi.KERNEL_COOPERATIVE if self.cooperative else 0
        out = ctypes.c_uint64()
        if self._code is not None:
            md = _ffi.ModuleDesc()
            md.size = ctypes.sizeof(md)
            code = ctypes.create_string_buffer(self._code, len(self._code))
            md.code, md.code_size = ctypes.cast(code, ctypes.c_void_p), len(self._code)
            mod = ctypes.c_uint64()
            check(_ffi.lib.cubehip_module_create(device._live(), ctypes.byref(md), ctypes.byref(mod)), "cubehip_module_create")
            try:
                check(_ffi.lib.cubehip_module_kernel(mod.value, ctypes.byref(d), ctypes.byref(out)), "cubehip_module_kernel")
            finally:
                _ffi.lib.cubehip_module_destroy(mod.value)
            return out.value
        if self.name_expressions is None:
            d.source = self.source.encode()
            d.options, d.option_count = opts, len(self.options)
            check(_ffi.lib.cubehip_kernel_create(device._live(), ctypes.byref(d), ctypes.byref(out)), "cubehip_kernel_create")
            return out.value
        # A kernel of the module: the module handle goes once the kernel is made (a module's
        # kernels outlive it; the device keeps the module itself, one per source, options and
        # expressions).
        md = _ffi.ModuleDesc()
        md.size = ctypes.sizeof(md)
        md.source = self.source.encode()
        md.options, md.option_count = opts, len(self.options)
        names = (ctypes.c_char_p * max(len(self.name_expressions), 1))(*[n.encode() for n in self.name_expressions])
        md.name_expressions, md.name_count = names, len(self.name_expressions)
        mod = ctypes.c_uint64()
        check(_ffi.lib.cubehip_module_create(device._live(), ctypes.byref(md), ctypes.byref(mod)), "cubehip_module_create")
        try:
            check(_ffi.lib.cubehip_module_kernel(mod.value, ctypes.byref(d), ctypes.byref(out)), "cubehip_module_kernel")
        finally:
            _ffi.lib.cubehip_module_destroy(mod.value)
        return out.value

    def _retry(self, st: int, grid: Any, args: tuple[Any, ...], stream: Any) -> None:
        """After a refused launch (nothing was queued): a kernel made without device= whose
        arrays are all of one other open device moves there and launches again; any other
        refusal raises. Only refused launches come here, so following the arrays costs
        launches that stay on one device nothing."""
        if self._implicit and self._h:
            devs = {id(a.device): a.device for a in args if isinstance(a, DeviceArray)}
            if len(devs) == 1:
                (dev,) = devs.values()
                if dev is not self.device and dev._h:
                    self._rebind(dev)
                    return self(grid, *args, stream=stream)
        raise self._fail(st)

    def _rebind(self, device: Any) -> None:
        """Moves the kernel to device: made (and compiled, from the caches) there, its
        launch planned again; the kernel on the old device is destroyed."""
        h = self._create(device)
        old, old_dev = self._h, self.device
        self._h, self.device = h, device
        if old and old_dev._h:
            _ffi.lib.cubehip_kernel_destroy(old)
        self.__class__ = self._base_class
        self._plan()
        self.compile()
        # The attributes set on the old device's function are the kernel's: set them here too.
        for attr, value in getattr(self, "_set_attrs", {}).items():
            self.set_attribute(attr, value)

    # --- compile -------------------------------------------------------------------------

    def compile(self) -> None:
        """Compiles now (or loads from the kernel caches); CompileError carries the log."""
        st = _ffi.lib.cubehip_kernel_compile(self._live())
        if st == _ffi.ERROR_COMPILE:
            err = error(st, "cubehip_kernel_compile")
            raise CompileError(st, err.message, "cubehip_kernel_compile", self.log(), self.source, self.options)
        check(st, "cubehip_kernel_compile")

    def log(self) -> str:
        """The compiler's log of the last failed compile ("" when none)."""
        return _string(_ffi.lib.cubehip_kernel_log, self._live(), "cubehip_kernel_log")

    # --- launch --------------------------------------------------------------------------

    def _plan(self) -> None:
        n = len(self.params) if self.params is not None else 0
        self._n = n
        self._words = (ctypes.c_uint64 * max(3 * n, 3))()
        self._i64 = (ctypes.c_int64 * len(self._words)).from_buffer(self._words)
        self._f64 = (ctypes.c_double * len(self._words)).from_buffer(self._words)
        self._f32 = (ctypes.c_float * (2 * len(self._words))).from_buffer(self._words)
        self._grid = (ctypes.c_uint32 * 3)(1, 1, 1)
        self._lock = threading.Lock()
        self._last_grid: Any = (1, 1, 1)
        cls = self._base_class
        # A subclass that launches its own way keeps its __call__ (Kernel.__call__ under it).
        native = _ffi.native
        if (native is not None and self.params is not None and all(p.kind is not None for p in self.params)
                and n <= native.LAUNCH_MAX_ARGS and cls.__call__ is Kernel.__call__):
            # A class of its own, under the kernel's class (Kernel, or a subclass whose methods
            # stay), so that k(...) finds the built-in call in one lookup.
            self.__class__ = type(cls.__name__, (cls,), {"__call__": self._native_call(), "__doc__": cls.__doc__})

    def _native_call(self) -> Any:
        """The kernel's call as a built-in function of the extension (_launch.c's
        kernel_launcher): k(grid, *args) with a grid of ints and arguments exactly of their
        parameters' types (a DeviceArray of a dtype its pointer takes, an int or numpy
        integer in range, a float, numpy float32 or float64) packs and launches in C,
        without a Python frame; any other call, and any call the library refuses, goes to
        Kernel.__call__, which checks, converts and raises. A built-in function is not a
        descriptor: it is called without the kernel, which it reaches through a weak
        reference only on that path, so the kernel is freed as soon as it is unused."""
        assert self.params is not None
        kinds = bytes(_ffi.ARG_BUFFER if p.kind == "buffer" else _KIND_CODE[p.kind] for p in self.params)
        # Per parameter, the dtype objects its arrays are taken with in C (compared by
        # identity, so the check costs the launch one attribute read an array); None for a
        # scalar or a pointer of any dtype. An array of another dtype object goes to
        # Kernel.__call__, which takes it or raises.
        dtypes = tuple(
            tuple(d for d in _COMMON_DTYPES if _elem_takes(p.elem, d)) if p.kind == "buffer" and p.elem is not None else None
            for p in self.params
        )
        ref = weakref.ref(self)

        def slow(*args: Any, **kwargs: Any) -> None:
            k = ref()
            if k is None:  # pragma: no cover - the kernel is alive while it is called
                raise ValueError("the kernel was freed")
            Kernel.__call__(k, *args, **kwargs)  # its own errors for a missing grid or a bad keyword

        return _ffi.native.kernel_launcher(self._h, kinds, DeviceArray, slow, _NUMPY_INTS, _NUMPY_FLOATS, dtypes)

    def _bad_count(self, args: tuple[Any, ...]) -> TypeError:
        n = len(self.params or ())
        return TypeError(f"{self.entry} takes {n} arguments ({self._signature()}), {len(args)} given")

    def _fail(self, st: int) -> Exception:
        if self._h == 0:
            return ValueError(f"kernel {self.entry} was destroyed")
        return error(st, "cubehip_launch")

    def _fill_dynamic(self, args: tuple[Any, ...], temps: list[Any]) -> None:
        """Packs arguments whose kinds come from the values: device arrays, numpy scalars.
        Arrays imported for raw pointers go to temps, released after the launch."""
        words, n = self._words, len(args)
        if 3 * n > len(words):
            self._words = (ctypes.c_uint64 * (3 * n))()
            self._i64 = (ctypes.c_int64 * (3 * n)).from_buffer(self._words)
            self._f64 = (ctypes.c_double * (3 * n)).from_buffer(self._words)
            self._f32 = (ctypes.c_float * (6 * n)).from_buffer(self._words)
            words = self._words
        for i, a in enumerate(args):
            p = self.params[i] if self.params is not None else None
            kind = p.kind if p is not None else None
            if kind is None:
                if isinstance(a, DeviceArray):
                    kind = "buffer"
                elif isinstance(a, np.generic) and a.dtype in _DTYPE_KIND:
                    kind = _DTYPE_KIND[a.dtype]
                else:
                    raise _bad_arg(self, i, a, "a DeviceArray or a numpy scalar (np.float32(2), np.int32(n)): "
                                   "the kernel's declaration does not say this parameter's C type; or give arg_types=")
            w = 3 * i + 1
            if kind == "buffer":
                words[3 * i] = _ffi.ARG_BUFFER
                words[w], words[w + 1] = _buffer(self, i, a, p, temps)
            elif kind in ("f32", "f64"):
                words[3 * i] = _KIND_CODE[kind]
                v = _as_float(self, i, a, kind)
                if kind == "f64":
                    self._f64[w] = v
                else:
                    words[w] = 0
                    self._f32[2 * w] = v
            else:
                words[3 * i] = _KIND_CODE[kind]
                v = _as_int(self, i, a, kind)
                words[w] = v & 0xFFFFFFFFFFFFFFFF  # two's complement, as the i64 view stores it

    def __call__(self, grid: int | Sequence[int], *args: Any, stream: Any = None) -> None:
        """Queues the kernel over grid blocks with args in the kernel's order, on stream (a
        Stream or an id; None is the default stream, 0). A malformed launch raises here and
        queues nothing; a failure of the work itself is carried by the arrays it writes
        (CarriedFailure on their next read).

        With the extension (cubehip._native), a kernel whose declaration gives every
        parameter's kind is called by the extension's built-in function, which comes here
        only for what it does not take itself (numpy scalars, a list grid, a bad argument);
        without it, every launch comes here."""
        if self.params is not None and len(args) != len(self.params):
            raise self._bad_count(args)
        if self._implicit and stream is not None and type(stream) is not int:
            # A kernel made without device= follows a Stream of another open device, as it
            # follows its arrays (see _retry).
            sdev = getattr(stream, "device", None)
            if sdev is not None and sdev is not self.device and getattr(sdev, "_h", 0) and self._h:
                self._rebind(sdev)
                return self(grid, *args, stream=stream)
        # One thread at a time fills the kernel's grid and argument arrays and launches from
        # them: another thread's stores between this one's and its launch would launch it
        # with the other's arguments.
        temps: list[Any] = []
        try:
            with self._lock:
                if grid is not self._last_grid and not (type(grid) is int and type(self._last_grid) is int and grid == self._last_grid):
                    self._set_grid(grid)
                self._fill_dynamic(args, temps)
                cs = 0 if stream is None else self._stream(stream)
                st = _launch(self._h, cs, ctypes.addressof(self._grid), ctypes.addressof(self._words), len(args))
        except _OtherDevice as e:
            if not (self._implicit and e.device._h and self._h):
                raise
            self._rebind(e.device)
            return self(grid, *args, stream=stream)
        finally:
            # Another library's memory imported for a raw pointer: the import holds it until
            # the launch's work is done, whatever happens to this array.
            for t in temps:
                t.release()
        if st:
            self._retry(st, grid, args, stream)

    def launch(self, grid: int | Sequence[int], *args: Any, stream: Any = None) -> None:
        """The same as calling the kernel."""
        self(grid, *args, stream=stream)

    def max_active_blocks_per_multiprocessor(self, block_size: int | None = None, shared_mem: int | None = None) -> int:
        """How many blocks of block_size threads (default: the kernel's block) with shared_mem
        bytes of dynamic shared memory (default: the kernel's) one multiprocessor of the
        device holds at once (hipModuleOccupancyMaxActiveBlocksPerMultiprocessor; 0 for a
        block that cannot run). Times ``device.properties.multiprocessor_count`` it is the
        most blocks a cooperative launch may have."""
        if block_size is None:
            block_size = self.block[0] * self.block[1] * self.block[2]
        if shared_mem is None:
            shared_mem = self.shared_mem
        if not isinstance(block_size, int) or not 1 <= block_size < 2**31:
            raise ValueError(f"block_size must be an int in [1, 2**31), not {block_size!r}")
        if not isinstance(shared_mem, int) or not 0 <= shared_mem < 2**32:
            raise ValueError(f"shared_mem must be an int in [0, 2**32), not {shared_mem!r}")
        out = ctypes.c_int32()
        st = _ffi.lib.cubehip_kernel_max_active_blocks(self._live(), block_size, shared_mem, ctypes.byref(out))
        if st == _ffi.ERROR_COMPILE:
            err = error(st, "cubehip_kernel_max_active_blocks")
            raise CompileError(st, err.message, "cubehip_kernel_max_active_blocks", self.log())
        check(st, "cubehip_kernel_max_active_blocks")
        return out.value

    # --- function attributes ---------------------------------------------------------------

    @property
    def attributes(self) -> dict[str, int]:
        """The kernel's function attributes on its device, as CuPy's ``RawKernel.attributes``:
        a dict of ``max_threads_per_block``, ``shared_size_bytes``, ``const_size_bytes``,
        ``local_size_bytes``, ``num_regs``, ``ptx_version``, ``binary_version``,
        ``cache_mode_ca``, ``max_dynamic_shared_size_bytes`` and
        ``preferred_shared_memory_carveout`` (hipFuncGetAttribute). One the platform cannot
        tell is 0: on the cpu device all but max_threads_per_block and the two settable ones.
        It compiles the kernel first if it was not."""
        return {name: self.get_attribute(name) for name in FUNC_ATTRIBUTES}

    def get_attribute(self, attr: str | int) -> int:
        """One function attribute, by its name in ``attributes`` or HIP's number."""
        out = ctypes.c_int32()
        st = _ffi.lib.cubehip_kernel_get_attribute(self._live(), _func_attr(attr), ctypes.byref(out))
        if st == _ffi.ERROR_COMPILE:
            err = error(st, "cubehip_kernel_get_attribute")
            raise CompileError(st, err.message, "cubehip_kernel_get_attribute", self.log())
        check(st, "cubehip_kernel_get_attribute")
        return out.value

    def set_attribute(self, attr: str | int, value: int) -> None:
        """Sets max_dynamic_shared_size_bytes or preferred_shared_memory_carveout
        (hipFuncSetAttribute); see the properties of those names."""
        if not isinstance(value, int) or isinstance(value, bool) or not -(2**31) <= value < 2**31:
            raise ValueError(f"an attribute's value must be an int of 32 bits, not {value!r}")
        a = _func_attr(attr)
        check(_ffi.lib.cubehip_kernel_set_attribute(self._live(), a, value), "cubehip_kernel_set_attribute")
        if not hasattr(self, "_set_attrs"):
            self._set_attrs: dict[int, int] = {}
        self._set_attrs[a] = value

    @property
    def max_threads_per_block(self) -> int:
        """The largest block the kernel launches with."""
        return self.get_attribute("max_threads_per_block")

    @property
    def shared_size_bytes(self) -> int:
        """The kernel's static shared memory (on the cpu device, its module's as laid out in its shared arena)."""
        return self.get_attribute("shared_size_bytes")

    @property
    def const_size_bytes(self) -> int:
        """The constant memory the kernel uses."""
        return self.get_attribute("const_size_bytes")

    @property
    def local_size_bytes(self) -> int:
        """Local memory per thread."""
        return self.get_attribute("local_size_bytes")

    @property
    def num_regs(self) -> int:
        """Registers per thread."""
        return self.get_attribute("num_regs")

    @property
    def ptx_version(self) -> int:
        """The virtual architecture the kernel was compiled for (major*10+minor)."""
        return self.get_attribute("ptx_version")

    @property
    def binary_version(self) -> int:
        """The architecture of the kernel's binary (major*10+minor)."""
        return self.get_attribute("binary_version")

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        """The most dynamic shared memory a launch of the kernel may ask for. Setting it
        (hipFuncSetAttribute) raises or lowers that limit for every launch shape of the
        kernel on its device, up to what the device can give (more raises CubehipError
        hipErrorInvalidValue); a launch over the value set raises, naming it and the
        device's limit. Until set, a launch may have all the device gives (cubehip opts the
        kernel in where the device asks for that)."""
        return self.get_attribute("max_dynamic_shared_size_bytes")

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        self.set_attribute("max_dynamic_shared_size_bytes", value)

    @property
    def preferred_shared_memory_carveout(self) -> int:
        """The percent of L1 preferred as shared memory (-1: no preference), a hint."""
        return self.get_attribute("preferred_shared_memory_carveout")

    @preferred_shared_memory_carveout.setter
    def preferred_shared_memory_carveout(self, value: int) -> None:
        self.set_attribute("preferred_shared_memory_carveout", value)

    # --- module variables ------------------------------------------------------------------

    def global_size(self, name: str) -> int:
        """The size in bytes of the kernel module's ``__constant__`` or ``__device__``
        variable name (its symbol name: as written at global scope, mangled inside a
        namespace). An unknown name raises, naming it."""
        out = ctypes.c_uint64()
        check(_ffi.lib.cubehip_kernel_global_size(self._live(), _symbol(name), ctypes.byref(out)), "cubehip_kernel_global_size")
        return out.value

    def write_global(self, name: str, value: Any, stream: Any = None) -> None:
        """Copies value (a numpy array, anything numpy turns into one, or bytes) into the
        module variable name, queued on stream after its earlier work, so the stream's next
        launch sees it. Its bytes must fill the variable exactly (``np.uint32([m0, m1])``
        for an ``unsigned[2]``); value may change as soon as the call returns."""
        if isinstance(value, (bytes, bytearray, memoryview)):
            buf = np.frombuffer(value, dtype=np.uint8)
        else:
            buf = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
        cs = 0 if stream is None else self._stream(stream)
        check(_ffi.lib.cubehip_kernel_global_write(self._live(), cs, _symbol(name), buf.ctypes.data, buf.nbytes),
              "cubehip_kernel_global_write")

    def read_global(self, name: str, dtype: Any = np.uint8, stream: Any = None) -> np.ndarray:
        """The module variable name as a 1-D numpy array of dtype, read after the work
        queued on stream so far (waiting for it): a launch's writes to it are there."""
        dt = np.dtype(dtype)
        size = self.global_size(name)
        if size % dt.itemsize:
            raise ValueError(f"module variable {name!r} is {size} bytes, not a whole number of {dt} ({dt.itemsize} bytes)")
        out = np.empty(size // dt.itemsize, dtype=dt)
        cs = 0 if stream is None else self._stream(stream)
        check(_ffi.lib.cubehip_kernel_global_read(self._live(), cs, _symbol(name), out.ctypes.data, out.nbytes),
              "cubehip_kernel_global_read")
        return out


    def _stream(self, stream: Any) -> int:
        if type(stream) is int and 0 <= stream < 2**64:
            return stream
        if isinstance(stream, Stream):
            if stream.device is not self.device:
                raise ValueError(f"{self.entry}: the stream is one of {stream.device!r}, the kernel is on {self.device!r}")
            return stream.id

        sid = stream_id(stream)
        if not 0 <= sid < 2**64:
            raise ValueError(f"stream id {sid} is out of range")
        return sid

    def _set_grid(self, grid: Any) -> None:
        g = _dim3(grid, "grid")
        self._grid[0], self._grid[1], self._grid[2] = g
        self._last_grid = grid if _plain_grid(grid) else _NO_GRID

    def _signature(self) -> str:
        return ", ".join(p.text or f"{p.kind} {p.name}" for p in self.params or [])

    # --- lifetime ------------------------------------------------------------------------

    def _live(self) -> int:
        if self._h == 0:
            raise ValueError(f"kernel {self.entry} was destroyed")
        self.device._live()
        return self._h

    def destroy(self) -> None:
        """Destroys the kernel (launches already queued are unaffected). Harmless twice."""
        h, self._h = self._h, 0
        if h:
            if self.device._h:
                check(_ffi.lib.cubehip_kernel_destroy(h), "cubehip_kernel_destroy")

    close = destroy

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    def __del__(self) -> None:
        try:
            if self._h and self.device._h:
                _ffi.lib.cubehip_kernel_destroy(self._h)
                self._h = 0
        except Exception:
            pass

    def __repr__(self) -> str:
        coop = " cooperative" if self.cooperative else ""
        return f"<cubehip.Kernel {self.entry}({self._signature()}) block={self.block}{coop}>"


_NO_GRID = object()  # no grid remembered: every grid, None included, is checked


def _plain_grid(grid: Any) -> bool:
    """Whether a launch may remember grid to skip checking it again: an int or a tuple of
    ints, which cannot change. A list or a numpy value may change in place, or compare
    with another grid element by element, so it is checked on every launch."""
    return type(grid) is int or type(grid) is tuple and all(type(x) is int for x in grid)


def _dim3(v: Any, what: str) -> tuple[int, int, int]:
    try:
        if isinstance(v, bool) or isinstance(v, (tuple, list)) and any(isinstance(x, bool) for x in v):
            raise TypeError
        dims = [operator.index(v)] if isinstance(v, (int, np.integer)) else [operator.index(x) for x in v]
    except TypeError:
        raise TypeError(f"{what} must be an int or up to three ints, not {v!r}") from None
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} must have one to three dimensions, not {len(dims)}")
    if what == "grid" and dims[0] == 0:
        raise ValueError("grid x is 0: to launch nothing for an empty input, skip the call")
    if any(not 1 <= d < 2**32 for d in dims):
        raise ValueError(f"{what} {tuple(dims)}: every dimension must be in [1, 2**32)")
    dims += [1] * (3 - len(dims))
    return dims[0], dims[1], dims[2]


class Module:
    """Several kernels from one source, like CuPy's RawModule: ``m.get_function(name)``. The
    kernels of one source and options are one module on the device, compiled once and sharing
    its ``__device__`` and ``__constant__`` variables; name_expressions are the C++ kernels
    (``"reduce<float, 256>"``, a C++-linkage kernel's name, an overload picked by a cast) its
    compile resolves, each then taken by that expression."""

    def __init__(self, source: str, options: Sequence[str] = (), device: Any = None,
                 name_expressions: Sequence[str] | None = None) -> None:
        self.source = source
        self.options = tuple(options)
        self.name_expressions = None if name_expressions is None else tuple(name_expressions)
        # None: each kernel follows the arrays it is launched with, as a Kernel made without
        # device= does.
        self.device = device
        self._kernels: dict[tuple[Any, ...], Kernel] = {}

    def get_function(self, name: str, block: int | Sequence[int] = (256,), shared_mem: int = 0,
                     io: Sequence[str] | None = None, arg_types: Sequence[Any] | None = None) -> Kernel:
        """The kernel name of the module's source (made once per launch shape)."""
        key = (name, _dim3(block, "block"), shared_mem, tuple(io) if io else None, tuple(arg_types) if arg_types else None)
        k = self._kernels.get(key)
        if k is None or k._h == 0:
            k = Kernel(self.source, name, block=block, shared_mem=shared_mem, io=io, options=self.options,
                       device=self.device, arg_types=arg_types, name_expressions=self.name_expressions)
            self._kernels[key] = k
        return k


__all__ = ["Kernel", "Module", "Param", "parse_params", "InvalidArgument"]


def _symbol(name: Any) -> bytes:
    """A module variable's name as the C ABI takes it."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a module variable name must be a non-empty str, not {name!r}")
    return name.encode()
