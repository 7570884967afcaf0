#!/usr/bin/env bash
# gpu-test.sh builds what a GPU machine needs to test cubehip without Go (ROCm and CUDA CI
# runners often have none) into build/gpu/:
#
#   conformance.test  the hipsys conformance suite (TestNvidia, TestAMD, TestCPU, ...)
#   nvidia.test       the nvidia platform's tests, and its benchmarks (-test.bench), each
#                     paired with the raw driver's C loop in the same process
#   anchor            bench/anchor.c: the raw CUDA driver API figures of a plain C
#                     program, built with the system C compiler, no CUDA headers
#   server.test       the server module's tests and Device benchmarks (CUBEHIP_PLATFORM
#                     picks the platform: nvidia or amd there)
#   cubehip           the command: `cubehip bench` runs the Device budgets beside the anchor
#   run.sh            runs all of them there (ROUNDS rounds of benchmarks, default 3)
#                     and prints the tables: logs in the folder given
#
# Copy build/gpu to the machine and run build/gpu/run.sh [logdir]. Set GOWORK as usual to
# build against another workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/gpu
mkdir -p "$out"

go test -c -o "$out/conformance.test" ./modules/hipsys/conformance
go test -c -o "$out/nvidia.test" ./modules/hipsys/nvidia
go test -c -o "$out/server.test" ./modules/server
go build -o "$out/cubehip" ./modules/server/cmd/cubehip
${CC:-cc} -O2 -Wall -o "$out/anchor" modules/hipsys/nvidia/bench/anchor.c -ldl
# The C ABI: the library, the C test of every function and the examples, linked to find
# the library beside them ($ORIGIN/lib), and the benchmarks that pair a C host's loops
# through it with the raw driver's.
./scripts/build-capi.sh >/dev/null
mkdir -p "$out/lib"
cp -P build/lib/libcubehip.so* "$out/lib/"
for host in modules/capi/tests/abi_test.c modules/capi/examples/c/saxpy.c; do
  ${CC:-cc} -std=c11 -O2 -Wall -Iinclude "$host" -L"$out/lib" -lcubehip -lpthread '-Wl,-rpath,$ORIGIN/lib' \
    -o "$out/capi-$(basename "$host" .c)"
done
go test -c -o "$out/capi.test" ./modules/capi
cp modules/hipsys/nvidia/bench/run.sh "$out/"
chmod +x "$out/run.sh"
echo "built $out: $(cd "$out" && echo *)"
