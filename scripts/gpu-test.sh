#!/usr/bin/env bash
# gpu-test.sh builds what a GPU machine needs to test cubehip without Go (ROCm and CUDA CI
# runners often have none) into build/gpu/:
#
#   conformance.test  the hipsys conformance suite (TestNvidia, TestAMD, TestCPU, ...)
#   nvidia.test       the nvidia platform's tests, and its benchmarks (-test.bench), each
#                     paired with the raw driver's C loop in the same process
#   anchor            bench/anchor.c: the raw CUDA driver API figures of a plain C
#                     program, built with the system C compiler, no CUDA headers
#   waits             bench/waits.c: the ways to wait for a kernel or a small read, timed
#                     in a plain C program, the same way
#   server.test       the server module's tests and Device benchmarks (CUBEHIP_PLATFORM
#                     picks the platform: nvidia or amd there)
#   cubehip           the command: `cubehip bench` runs the Device budgets beside the anchor
#   crossing/         the Go runtime's own cost to a C host (modules/capi/bench/crossing)
#   run.sh            runs all of them there (ROUNDS rounds of benchmarks, default 3)
#                     and prints the tables: logs in the folder given
#
# Copy build/gpu to the machine and run build/gpu/run.sh [logdir]. Set GOWORK as usual to
# build against another workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/gpu
mkdir -p "$out"
# Stripped (-s -w: no symbol table, no DWARF; panics still name their functions), so the
# folder fits what a device run carries (64 MiB).
strip=(-ldflags='-s -w')

go test -c "${strip[@]}" -o "$out/conformance.test" ./modules/hipsys/conformance
go test -c "${strip[@]}" -o "$out/nvidia.test" ./modules/hipsys/nvidia
go test -c "${strip[@]}" -o "$out/server.test" ./modules/server
go build "${strip[@]}" -o "$out/cubehip" ./modules/server/cmd/cubehip
${CC:-cc} -O2 -Wall -o "$out/anchor" modules/hipsys/nvidia/bench/anchor.c -ldl
${CC:-cc} -std=c11 -O2 -Wall -o "$out/waits" modules/hipsys/nvidia/bench/waits.c -ldl
# The C ABI: the library, the C test of every function and the examples, linked to find
# the library beside them ($ORIGIN/lib), and the benchmarks that pair a C host's loops
# through it with the raw driver's.
./scripts/build-capi.sh >/dev/null
mkdir -p "$out/lib"
cp -P build/lib/libcubehip.so* "$out/lib/"
for host in modules/capi/tests/abi_test.c modules/capi/tests/globals_test.c modules/capi/tests/interop_test.c modules/capi/tests/import_test.c \
  modules/capi/tests/module_test.c modules/capi/tests/declared_test.c modules/capi/tests/cooperative_test.c \
  modules/capi/tests/funcattr_test.c modules/capi/tests/pointer_test.c modules/capi/tests/check_test.c modules/capi/examples/c/saxpy.c; do
  ${CC:-cc} -std=c11 -O2 -Wall -Iinclude "$host" -L"$out/lib" -lcubehip -lpthread '-Wl,-rpath,$ORIGIN/lib' \
    -o "$out/capi-$(basename "$host" .c)"
done
${CXX:-c++} -std=c++17 -O2 -Wall -Iinclude modules/capi/tests/globals_test.cpp -L"$out/lib" -lcubehip '-Wl,-rpath,$ORIGIN/lib' \
  -o "$out/capi-globals_test_cpp"
go test -c "${strip[@]}" -o "$out/capi.test" ./modules/capi
# What the Go runtime alone costs a C host's driver-bound loop, the floor under the ABI's
# figures (modules/capi/bench/crossing).
mkdir -p "$out/crossing"
go build -buildmode=c-shared -o "$out/crossing/libcrossing.so" ./modules/capi/bench/crossing
rm -f "$out/crossing/libcrossing.h"
${CC:-cc} -std=c11 -O2 -Wall modules/capi/bench/crossing/host/host.c -L"$out/crossing" -lcrossing '-Wl,-rpath,$ORIGIN' \
  -o "$out/crossing/crossing"
cp modules/hipsys/nvidia/bench/run.sh "$out/"
chmod +x "$out/run.sh"
echo "built $out: $(cd "$out" && echo *)"

# --- the Python package (bindings/python) -------------------------------------------------
# build/gpu/python: the wheel (libcubehip.so and the package's extension cubehip._native
# inside, compiled here on CPython's stable ABI: the GPU machine's Python 3.10+ loads it
# with no compiler of its own), the test suite (which fails where the extension is not in
# use), the benchmark with its C loops prebuilt, and run.sh, which installs the wheel into a
# fresh venv there (no network) and runs the suite and the benchmark on CUBEHIP_PLATFORM
# (default nvidia):
#
#   build/gpu/python/run.sh [logdir]
#
# pytest and hypothesis travel along in python/site (Debian's pure-Python copies), used
# only where the machine's Python lacks them.
py_out="$out/python"
rm -rf "$py_out"
mkdir -p "$py_out/site" "$py_out/benchmarks"
./scripts/build-wheel.sh --lib build/lib/libcubehip.so --outdir "$py_out" >/dev/null
cp -r bindings/python/tests "$py_out/tests"
cp -r bindings/python/examples "$py_out/examples"
find "$py_out/tests" -name __pycache__ -prune -exec rm -rf {} +
cp bindings/python/benchmarks/bench.py bindings/python/benchmarks/kernels.py bindings/python/benchmarks/exchange.py bindings/python/benchmarks/cloop.c "$py_out/benchmarks/"
mkdir -p "$py_out/benchmarks/include"
cp include/cubehip.h "$py_out/benchmarks/include/"
${CC:-cc} -O2 -shared -fPIC -pthread -Iinclude bindings/python/benchmarks/cloop.c -o "$py_out/benchmarks/libcloop.so"
for m in pytest _pytest pluggy iniconfig packaging py.py attr attrs hypothesis sortedcontainers tomli exceptiongroup; do
  [ -e "/usr/lib/python3/dist-packages/$m" ] && cp -r "/usr/lib/python3/dist-packages/$m" "$py_out/site/"
done
find "$py_out/site" -name __pycache__ -prune -exec rm -rf {} +
cp bindings/python/benchmarks/run-gpu.sh "$py_out/run.sh"
chmod +x "$py_out/run.sh"
echo "built $py_out: $(cd "$py_out" && echo *)"
