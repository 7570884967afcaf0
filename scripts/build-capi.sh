#!/usr/bin/env bash
# Builds libcubehip.so, the C ABI (include/cubehip.h), into build/lib, with its pkg-config
# file; with --install (or --prefix DIR, which implies it), also installs library, header
# and cubehip.pc under PREFIX (default /usr/local), so that a host builds and runs with
#
#   PKG_CONFIG_PATH=PREFIX/lib/pkgconfig cc host.c $(pkg-config --cflags --libs cubehip)
#
# (PKG_CONFIG_PATH=build/lib/pkgconfig for the build tree). The .pc's Libs carry an rpath
# to its libdir, so the host finds the library with no LD_LIBRARY_PATH.
# The go build is skipped when the library is newer than every source it is built from.
#
# Usage: scripts/build-capi.sh [--install] [--prefix DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export PATH="$PATH:/usr/local/go/bin"

install=0
prefix=/usr/local
while [ $# -gt 0 ]; do
  case "$1" in
    --install) install=1 ;;
    --prefix) [ $# -ge 2 ] || { echo "build-capi: --prefix needs a directory" >&2; exit 2; }
      prefix=$2; install=1; shift ;;
    --prefix=*) prefix=${1#--prefix=}; install=1 ;;
    *) echo "build-capi: unknown argument $1 (usage: $0 [--install] [--prefix DIR]; --prefix installs there)" >&2; exit 2 ;;
  esac
  shift
done

# The library's version is the header's: one place to bump.
ver() { sed -n "s/^#define CUBEHIP_VERSION_$1 \([0-9]*\)$/\1/p" include/cubehip.h; }
major=$(ver MAJOR) minor=$(ver MINOR) patch=$(ver PATCH)
version="$major.$minor.$patch"
soname="libcubehip.so.$major"

out="$top/build/lib"
mkdir -p "$out/pkgconfig"
# -soname: hosts record libcubehip.so.MAJOR, so a patch or minor release replaces the
# file without relinking them.
# -tags cubehip_release leaves out what only the tests use (the fuzz test's bridge into the
# ABI, the benchmarks' C loops): what ships is what hosts call.
lib="$out/libcubehip.so.$version"
# A source newer than the library: every module's Go, C and headers (capi imports them
# all, and the files they embed), the go.mod/go.sum files, go.work, the public header and this script. Go's own
# cache would make the build cheap but still relink (seconds) and give a new file.
stale() {
  [ ! -f "$lib" ] && return 0
  [ -n "$(find modules include go.work "$0" -newer "$lib" \( -name '*.go' ! -name '*_test.go' -o -name '*.c' -o -name '*.h' -o -name '*.s' -o -name 'go.mod' -o -name 'go.sum' -o -name 'go.work' -o -name '*.hip' -o -path '*/rtcinclude/*' -o -name build-capi.sh \) -print -quit 2>/dev/null)" ]
}
if stale; then
  (cd modules/capi && go build -buildmode=c-shared -trimpath -tags cubehip_release \
    -ldflags "-extldflags=-Wl,-soname,$soname" \
    -o "$lib" .)
else
  echo "build-capi: $lib is newer than its sources; not rebuilt"
fi
rm -f "$out/libcubehip.so.$major.$minor.h" "$out/libcubehip.h" # cgo's header; include/cubehip.h is the contract
ln -sf "libcubehip.so.$version" "$out/$soname"
ln -sf "$soname" "$out/libcubehip.so"

pc() {
  cat <<PC
prefix=$1
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: cubehip
Description: HIP kernels on AMD GPUs, NVIDIA GPUs and an embedded cpu device
Version: $version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lcubehip
Cflags: -I\${includedir}
PC
}
# The in-tree .pc points at the build tree, so tests can build hosts without installing.
pc "$top/build" > "$out/pkgconfig/cubehip.pc"
mkdir -p "$top/build/include"
cp include/cubehip.h "$top/build/include/"
[ -f include/cubehip.hpp ] && cp include/cubehip.hpp "$top/build/include/"
echo "build-capi: $out/libcubehip.so.$version (soname $soname)"

if [ $install = 1 ]; then
  install -d "$prefix/lib/pkgconfig" "$prefix/include"
  install -m 0755 "$out/libcubehip.so.$version" "$prefix/lib/"
  ln -sf "libcubehip.so.$version" "$prefix/lib/$soname"
  ln -sf "$soname" "$prefix/lib/libcubehip.so"
  install -m 0644 include/cubehip.h "$prefix/include/"
  [ -f include/cubehip.hpp ] && install -m 0644 include/cubehip.hpp "$prefix/include/"
  pc "$prefix" > "$prefix/lib/pkgconfig/cubehip.pc"
  command -v ldconfig >/dev/null && [ "$(id -u)" = 0 ] && ldconfig || true
  echo "build-capi: installed under $prefix"
fi
