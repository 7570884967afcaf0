#!/usr/bin/env bash
# run.sh runs the binaries scripts/gpu-test.sh built, on a GPU machine without Go, and
# writes its logs to the folder given (default ./gpu-logs):
#   conformance.log    the conformance suite against the nvidia platform
#   nvidia.log         the nvidia platform's own tests
#   anchor.log         the raw-driver anchor program's figures (a process without Go)
#   waits.log          bench/waits.c: the ways to wait for a kernel or a 4-byte read
#   nvidia-bench.log   ROUNDS (default 3) processes of the nvidia benchmarks, each the
#                      platform's Go path paired with the same loop in C in-process
#   nvidia-table.txt   per benchmark, over those processes: the median ratio Go ÷ C and
#                      the widest quartiles, and the sides' median µs per operation
#   server.log         the server module's tests on the nvidia platform
#   server-bench.log   the Device benchmarks beside hipsys, ROUNDS rounds; each graph
#                      replay in a process of its own
#   transfer-bench.log ROUNDS processes of BenchmarkTransfer256MiB: the Device's 256 MiB
#                      pageable reads and writes held to the host's memcpy in each
#   cubehip-bench.txt  `cubehip bench` against the anchor
#   capi.log           the C ABI's C test and saxpy host on the nvidia platform
#   capi-bench.log     a C host's loops through libcubehip beside the raw driver's, and
#                      every ABI call beside the same Device call from Go, and the
#                      Go runtime's own cost to a C host (crossing/)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${1:-./gpu-logs}"
mkdir -p "$logs"
rc=0

"$here/conformance.test" -test.run 'TestNvidia|TestCorpusNvidia' -test.v -test.timeout=300s >"$logs/conformance.log" 2>&1 || rc=1
tail -n 3 "$logs/conformance.log"
"$here/nvidia.test" -test.v -test.timeout=300s >"$logs/nvidia.log" 2>&1 || rc=1
tail -n 3 "$logs/nvidia.log"

# The GPU idles at a low clock: the anchor's first run, discarded, brings it up.
"$here/anchor" >/dev/null 2>&1
"$here/anchor" >"$logs/anchor.log" 2>&1 || rc=1
"$here/waits" 2 >"$logs/waits.log" 2>&1 || rc=1

# Each benchmark is 101 paired rounds whatever b.N: -test.benchtime=1x runs it once.
: >"$logs/nvidia-bench.log"
for round in $(seq 1 "${ROUNDS:-3}"); do
	"$here/nvidia.test" -test.run '^$' -test.bench . -test.benchtime=1x >>"$logs/nvidia-bench.log" 2>&1 || rc=1
done
awk '
function med(key,   n, i, j, t, a) {
	n = cnt[key]; if (n == 0) return 0
	for (i = 1; i <= n; i++) a[i] = val[key, i]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	if (!(name in seen)) { seen[name] = 1; order[++n] = name; lo[name] = 1e9; hi[name] = 0 }
	for (i = 3; i < NF; i++) {
		u = $(i+1); v = $i
		if (u == "x" || u == "go-us" || u == "c-us") val[name, u, ++cnt[name, u]] = v
		if (u == "x-q1" && v < lo[name]) lo[name] = v
		if (u == "x-q3" && v > hi[name]) hi[name] = v
	}
}
END {
	printf "%-14s %7s %13s %10s %10s %s\n", "benchmark", "Go÷C", "quartiles", "go µs/op", "C µs/op", "runs"
	for (k = 1; k <= n; k++) {
		b = order[k]; x = med(b SUBSEP "x")
		printf "%-14s %7.3f  %5.3f-%5.3f %10.3f %10.3f %d%s\n", b, x, lo[b], hi[b], med(b SUBSEP "go-us"), med(b SUBSEP "c-us"), cnt[b, "x"], (x > 1.05 ? "  OVER 5%" : "")
	}
}' "$logs/nvidia-bench.log" | tee "$logs/nvidia-table.txt"

if [ -x "$here/server.test" ]; then
	export CUBEHIP_PLATFORM=nvidia
	"$here/server.test" -test.v -test.timeout=300s >"$logs/server.log" 2>&1 || rc=1
	tail -n 1 "$logs/server.log"
	: >"$logs/server-bench.log"
	for round in $(seq 1 "${ROUNDS:-3}"); do
		s="$here/server.test -test.run ^$ -test.benchmem"
		for one in BenchmarkDeviceGraphReplay10 BenchmarkHipsysGraphReplay10; do
			$s -test.bench "^$one\$" -test.benchtime=20000x >>"$logs/server-bench.log" 2>&1 || rc=1
		done
		$s -test.bench '^Benchmark(Device|Hipsys)(Launch|AllocFree1MiB|Read4B)$' -test.benchtime=20000x >>"$logs/server-bench.log" 2>&1 || rc=1
		$s -test.bench '^Benchmark(Device(Write|Read)256MiB|HipsysCopy256MiB)$' -test.benchtime=10x >>"$logs/server-bench.log" 2>&1 || rc=1
	done
	# The 256 MiB pageable copies against the host's own memcpy, measured in the same
	# process: each line carries the anchor (memcpy1, memcpyN on threads) and every
	# copy's GB/s and its ratio to memcpyN (-x).
	: >"$logs/transfer-bench.log"
	for round in $(seq 1 "${ROUNDS:-3}"); do
		"$here/server.test" -test.run '^$' -test.bench '^BenchmarkTransfer256MiB$' -test.benchtime=1x >>"$logs/transfer-bench.log" 2>&1 || rc=1
	done
	grep '^BenchmarkTransfer' "$logs/transfer-bench.log"
	# Where the Device's cost per launch and read sits, the layers paired in one process.
	"$here/server.test" -test.run '^$' -test.bench '^BenchmarkLayers$' -test.benchtime=1x >>"$logs/server-bench.log" 2>&1 || rc=1
	grep '^BenchmarkLayers' "$logs/server-bench.log"
	grep '^Benchmark' "$logs/server-bench.log" | grep -v Layers | awk '{ name = $1; sub(/-[0-9]+$/, "", name); v[name] = v[name] " " $5 } END { for (n in v) print n ":" v[n] }' | sort
	(cd "$here" && ./cubehip bench -anchor "$here/anchor") >"$logs/cubehip-bench.txt" 2>&1 || rc=1
	tail -n 12 "$logs/cubehip-bench.txt"
fi

# The C ABI on this GPU: the C test of every function and error path, the saxpy host, and
# a C host's loops through libcubehip paired with the raw driver's in one process.
if [ -x "$here/capi-abi_test" ]; then
	CUBEHIP_PLATFORM=nvidia "$here/capi-abi_test" >"$logs/capi.log" 2>&1 || rc=1
	CUBEHIP_PLATFORM=nvidia "$here/capi-import_test" >>"$logs/capi.log" 2>&1 || rc=1
	CUBEHIP_PLATFORM=nvidia "$here/capi-saxpy" >>"$logs/capi.log" 2>&1 || rc=1
	CUBEHIP_PLATFORM=nvidia "$here/capi-globals_test" >>"$logs/capi.log" 2>&1 || rc=1
	CUBEHIP_PLATFORM=nvidia "$here/capi-interop_test" >>"$logs/capi.log" 2>&1 || rc=1
	CUBEHIP_PLATFORM=nvidia "$here/capi-globals_test_cpp" >>"$logs/capi.log" 2>&1 || rc=1
	for t in module_test declared_test cooperative_test funcattr_test pointer_test check_test; do
		CUBEHIP_PLATFORM=nvidia "$here/capi-$t" >>"$logs/capi.log" 2>&1 || rc=1
	done
	tail -n 3 "$logs/capi.log"
	: >"$logs/capi-bench.log"
	for round in $(seq 1 "${ROUNDS:-3}"); do
		CUBEHIP_PLATFORM=nvidia "$here/capi.test" -test.run '^$' -test.bench '^BenchmarkABIvsDriver$' -test.benchtime=1x >>"$logs/capi-bench.log" 2>&1 || rc=1
	done
	CUBEHIP_PLATFORM=nvidia "$here/capi.test" -test.run '^$' -test.bench '^BenchmarkABI$' -test.benchtime=1x >>"$logs/capi-bench.log" 2>&1 || rc=1
	if [ -x "$here/crossing/crossing" ]; then
		"$here/crossing/crossing" >>"$logs/capi-bench.log" 2>&1 || rc=1
	fi
	grep '^Benchmark' "$logs/capi-bench.log"
fi
exit $rc
