"""The C ABI is declared once, in include/cubehip.h: every prototype the package declares for
ctypes (_ffi._PROTOTYPES) and every function pointer the extension calls through (_native.h,
looked up by name in _native.c's bind) must say what the header says, parameter by parameter,
so a change to the header that one of them misses fails here instead of passing the wrong
width to the library.

Types are compared by what the calling convention sees: a handle (a struct of one uint64_t)
is a uint64_t, an enum an int32_t, size_t a uint64_t (ctypes' c_size_t is c_uint64 on the
64-bit platforms cubehip runs on), and a pointer is a pointer to the same kind of element
(void* and c_void_p take any pointer)."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest

from cubehip import _ffi

SRC = Path(_ffi.__file__).resolve().parent
HEADER = Path(__file__).resolve().parents[3] / "include" / "cubehip.h"

if not HEADER.is_file():  # pragma: no cover - a test run outside the repository
    pytest.skip(f"{HEADER} is not here: the test reads the repository's header", allow_module_level=True)

_HANDLES = {"cubehip_device", "cubehip_buffer", "cubehip_kernel", "cubehip_module", "cubehip_graph", "cubehip_profile"}
_SCALARS = {
    "uint64_t": "u64", "int64_t": "i64", "uint32_t": "u32", "int32_t": "i32", "int": "i32",
    "size_t": "u64", "status_t": "i32", "cubehip_status": "i32", "float": "f32", "double": "f64",
}


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _enums(text: str) -> set[str]:
    return set(re.findall(r"typedef\s+enum\s+\w*\s*\{[^}]*\}\s*(\w+)\s*;", text))


def _fn_typedefs(text: str) -> set[str]:
    return set(re.findall(r"typedef\s+[\w\s\*]+\(\s*\*\s*(\w+)\s*\)\s*\([^)]*\)\s*;", text))


def _c_kind(decl: str, enums: set[str], fns: set[str]) -> str:
    """The calling convention's view of one C parameter or return type (name and all)."""
    decl = " ".join(decl.split())
    if re.search(r"\(\s*\*", decl) or any(re.search(rf"\b{f}\b", decl) for f in fns):
        return "ptr:fn"
    pointer = "*" in decl or "[" in decl
    words = [w for w in re.findall(r"\w+", decl.split("[")[0]) if w not in ("const", "struct", "enum", "unsigned")]
    base = words[0] if words else "void"
    if base in _HANDLES:
        elem = "u64"
    elif base in enums:
        elem = "i32"
    elif base == "char":
        elem = "char"
    elif base == "void":
        elem = "any"
    elif base in _SCALARS:
        elem = _SCALARS[base]
    else:
        elem = "struct"
    if pointer:
        return "ptr:" + elem
    return "void" if elem == "any" else elem


def _params(plist: str) -> list[str]:
    plist = plist.strip()
    if plist in ("", "void"):
        return []
    out, depth, cur = [], 0, ""
    for ch in plist:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    return out + [cur]


def _header_prototypes() -> dict[str, tuple[str, list[str]]]:
    text = _strip_comments(HEADER.read_text())
    enums, fns = _enums(text), _fn_typedefs(text)
    protos = {}
    for m in re.finditer(r"(?m)^\s*([\w][\w\s\*]*?)\b(cubehip_\w+)\s*\(((?:[^()]|\([^()]*\))*)\)\s*;", text):
        ret, name, plist = m.groups()
        if "typedef" in ret:
            continue
        protos[name] = (_c_kind(ret, enums, fns), [_c_kind(p, enums, fns) for p in _params(plist)])
    return protos


def _ctypes_kind(t: object) -> str:
    if t is None:
        return "void"
    if t is ctypes.c_void_p:
        return "ptr:any"
    if t is ctypes.c_char_p:
        return "ptr:char"
    scalars = {
        ctypes.c_uint64: "u64", ctypes.c_int64: "i64", ctypes.c_uint32: "u32", ctypes.c_int32: "i32",
        ctypes.c_float: "f32", ctypes.c_double: "f64",
    }
    if t in scalars:
        return scalars[t]
    target = getattr(t, "_type_", None)
    if isinstance(t, type) and issubclass(t, ctypes._Pointer) and target is not None:
        inner = _ctypes_kind(target)
        return "ptr:" + ("struct" if inner.startswith("struct") or isinstance(target, type) and issubclass(target, (ctypes.Structure, ctypes.Union)) else inner)
    if isinstance(t, type) and issubclass(t, (ctypes.Structure, ctypes.Union)):
        return "struct"
    raise AssertionError(f"no rule for the ctypes type {t!r}")


def _compatible(declared: str, header: str) -> bool:
    """declared (the package's) says what the header says; an untyped pointer takes any."""
    if declared == header:
        return True
    if declared == "ptr:any" and header.startswith("ptr:"):
        return True
    return False


def _diff(where: str, name: str, ret: str, params: list[str], header: dict[str, tuple[str, list[str]]]) -> list[str]:
    if name not in header:
        return [f"{where}: {name} is not declared in include/cubehip.h"]
    hret, hparams = header[name]
    out = []
    if len(params) != len(hparams):
        out.append(f"{where}: {name} takes {len(params)} arguments, the header's {len(hparams)} ({hparams})")
    else:
        for i, (p, h) in enumerate(zip(params, hparams)):
            if not _compatible(p, h):
                out.append(f"{where}: {name} argument {i}: {p}, the header's {h}")
    if ret != "void" and not _compatible(ret, hret):
        out.append(f"{where}: {name} returns {ret}, the header's {hret}")
    return out


def test_header_parses():
    """A scan that finds next to nothing would pass vacuously."""
    header = _header_prototypes()
    assert len(header) > 50
    assert header["cubehip_launch"] == ("i32", ["u64", "u64", "ptr:u32", "ptr:struct", "u64"])
    assert header["cubehip_buffer_import_flags"][1][4] == "ptr:fn"


def test_ctypes_prototypes_match_header():
    header = _header_prototypes()
    problems = []
    for name, (argtypes, restype) in _ffi._PROTOTYPES.items():
        problems += _diff("_ffi._PROTOTYPES", name, _ctypes_kind(restype), [_ctypes_kind(a) for a in argtypes], header)
    assert not problems, "\n".join(problems)


def test_extension_function_pointers_match_header():
    header = _header_prototypes()
    h_text = _strip_comments((SRC / "_native.h").read_text())
    c_text = _strip_comments((SRC / "_native.c").read_text())
    enums, fns = _enums(h_text), _fn_typedefs(h_text)
    pointers = {}
    for m in re.finditer(r"extern\s+([\w\s\*]+?)\(\s*\*\s*(c_\w+)\s*\)\s*\(((?:[^()]|\([^()]*\))*)\)\s*;", h_text):
        ret, var, plist = m.groups()
        pointers[var] = (_c_kind(ret, enums, fns), [_c_kind(p, enums, fns) for p in _params(plist)])
    bound = dict((var, name) for name, var in re.findall(r'\{\s*"(cubehip_\w+)"\s*,\s*\(void\s*\*\*\)\s*&(c_\w+)\s*\}', c_text))
    assert len(pointers) >= 10, "the scan of _native.h found next to no function pointer"
    assert set(pointers) == set(bound), f"bind() looks up {sorted(bound)}, _native.h declares {sorted(pointers)}"
    problems = []
    for var, (ret, params) in pointers.items():
        problems += _diff(f"_native.h's {var}", bound[var], ret, params, header)
    assert not problems, "\n".join(problems)
