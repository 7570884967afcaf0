#!/usr/bin/env bash
# Builds libcubehip.so, the C ABI (include/cubehip.h), into build/lib, with its pkg-config
# file; with --install, also installs library, header and cubehip.pc under PREFIX
# (default /usr/local), so that a host builds with
#
#   cc host.c $(pkg-config --cflags --libs cubehip)
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
    --prefix) prefix=$2; shift ;;
    --prefix=*) prefix=${1#--prefix=} ;;
    *) echo "build-capi: unknown argument $1 (usage: $0 [--install] [--prefix DIR])" >&2; exit 2 ;;
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
(cd modules/capi && go build -buildmode=c-shared -trimpath -tags cubehip_release \
  -ldflags "-extldflags=-Wl,-soname,$soname" \
  -o "$out/libcubehip.so.$version" .)
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
Libs: -L\${libdir} -lcubehip
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
