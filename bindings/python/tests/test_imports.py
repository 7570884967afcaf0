"""The package's modules import one another in one direction: at the top of the module, in an
order with no circle (a module that needs what another above it has imports a lower module
holding it: _stream, _current), and not inside functions, where an import hides a circle
until the function first runs. A type named only in annotations is imported under
TYPE_CHECKING, which runs nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import cubehip

PKG = Path(cubehip.__file__).resolve().parent

# Imports inside functions that stay, each with its reason.
ALLOWED_LATE = {
    # The extension is loaded once the library is, which _ffi finds first.
    ("_ffi", "_native"),
    # MemoryPointer and arrays over raw pointers stand between the array and the import
    # layers: _pointer makes arrays (_array, _import), and _array hands out MemoryPointers.
    ("_pointer", "_array"),
    ("_pointer", "_import"),
    ("_array", "_pointer"),
}


def _package_imports(node: ast.AST, module: str) -> list[str]:
    out = []
    if isinstance(node, ast.ImportFrom) and node.level == 1:
        if node.module:
            out.append(node.module.split(".")[0])
        else:
            out += [a.name for a in node.names]
    return [m for m in out if m != module]


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return isinstance(t, ast.Name) and t.id == "TYPE_CHECKING" or isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"


def _scan() -> tuple[dict[str, set[str]], list[tuple[str, str, int]]]:
    top: dict[str, set[str]] = {}
    late: list[tuple[str, str, int]] = []
    for path in sorted(PKG.glob("*.py")):
        module = path.stem
        tree = ast.parse(path.read_text())
        top[module] = set()
        for node in tree.body:
            if isinstance(node, ast.If) and _is_type_checking(node):
                continue
            top[module].update(_package_imports(node, module))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    for m in _package_imports(inner, module):
                        late.append((module, m, inner.lineno))
    return top, late


def test_no_imports_inside_functions():
    _, late = _scan()
    bad = [f"{m}.py:{line} imports {o} inside a function" for m, o, line in late if (m, o) not in ALLOWED_LATE]
    assert not bad, "\n".join(bad)


def test_top_level_imports_have_no_circle():
    top, _ = _scan()
    assert len(top) > 10, "the scan found next to no module"
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for o in sorted(top.get(m, ())):
            if o not in top:
                continue  # the extension, not a module of these files
            if state.get(o) == 1:
                raise AssertionError("import circle: " + " -> ".join(path[path.index(o):] + [o]))
            if o not in state:
                visit(o)
        path.pop()
        state[m] = 2

    for m in sorted(top):
        if m not in state:
            visit(m)
