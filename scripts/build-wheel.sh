#!/usr/bin/env bash
# Builds the Python package's wheel (bindings/python) with libcubehip.so and the package's
# extension module (cubehip._native, compiled here against $PYTHON's headers: python3-dev)
# inside it, into build/python/dist (or --outdir DIR). The extension is on CPython's stable
# ABI, so the wheel (cubehip-VERSION-cp310-abi3-PLATFORM.whl) serves Python 3.10 and later. The library is built first with build-capi.sh, unless
# --lib FILE names one already built. No network: the build runs without isolation, on the
# Debian packages scripts/deps.sh installs (python3-setuptools, python3-wheel, python3-build).
#
# Usage: scripts/build-wheel.sh [--lib FILE] [--outdir DIR]
#   $PYTHON picks the interpreter (default /usr/bin/python3, else python3).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

lib=""
outdir="$top/build/python/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --lib) lib=$2; shift ;;
    --outdir) outdir=$2; shift ;;
    *) echo "build-wheel: unknown argument $1 (usage: $0 [--lib FILE] [--outdir DIR])" >&2; exit 2 ;;
  esac
  shift
done
# Debian's python3 by default: deps.sh installs the build tools there, not into a pyenv.
python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=python3; fi
fi

if [ -z "$lib" ]; then
  ./scripts/build-capi.sh >/dev/null
  lib="$top/build/lib/libcubehip.so"
fi
[ -e "$lib" ] || { echo "build-wheel: no library at $lib" >&2; exit 1; }

# Built from a copy, so the library never lands in the source tree, where the in-tree
# package (PYTHONPATH=bindings/python/src) would find it before $CUBEHIP_LIBRARY.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md bindings/python/src "$work/"
rm -rf "$work/src/cubehip/_lib" "$work/src/cubehip.egg-info"
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
# An extension built in place for the tests (setup.py build_ext --inplace) is not carried:
# the wheel's build compiles its own against the interpreter building it.
find "$work/src" -name '*.so' -delete
mkdir -p "$work/src/cubehip/_lib"
# One real file: a wheel keeps no symbolic links, and the package loads _lib/libcubehip.so.
cp -L "$lib" "$work/src/cubehip/_lib/libcubehip.so"
cp LICENSE NOTICE "$work/src/cubehip/_lib/" 2>/dev/null || true

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd) # the build runs in the copy: a relative path would land there
(cd "$work" && "$python" -m build --no-isolation --wheel --outdir "$outdir" . >"$work/build.log" 2>&1) || {
  cat "$work/build.log" >&2
  echo "build-wheel: the wheel build failed (are python3-build and python3-dev installed? scripts/deps.sh installs them)" >&2
  exit 1
}
built=("$outdir"/cubehip-*-cp310-abi3-*.whl)
echo "build-wheel: ${built[*]}"
