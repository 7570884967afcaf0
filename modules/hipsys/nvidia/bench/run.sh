#!/usr/bin/env bash
# run.sh runs the binaries scripts/gpu-test.sh built, on a GPU machine without Go, and
# writes its logs to the folder given (default ./gpu-logs):
#   conformance.log  the conformance suite against the nvidia platform
#   nvidia.log       the nvidia platform's own tests
#   bench.log        three rounds of the raw-driver anchor and the Go benchmarks, in turn
#   table.txt        each figure's best of the three rounds, raw against cubehip
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${1:-./gpu-logs}"
mkdir -p "$logs"
rc=0

"$here/conformance.test" -test.run TestNvidia -test.v -test.timeout=300s >"$logs/conformance.log" 2>&1 || rc=1
tail -n 3 "$logs/conformance.log"
"$here/nvidia.test" -test.v -test.timeout=300s >"$logs/nvidia.log" 2>&1 || rc=1
tail -n 3 "$logs/nvidia.log"

: >"$logs/bench.log"
for round in 1 2 3; do
	"$here/anchor" >>"$logs/bench.log" 2>&1 || rc=1
	b="$here/nvidia.test -test.run ^$ -test.benchmem"
	$b -test.bench '^BenchmarkLaunch$' -test.benchtime=100000x >>"$logs/bench.log" 2>&1 || rc=1
	$b -test.bench '^Benchmark(LaunchSync|GraphReplay|Read4)$' -test.benchtime=20000x >>"$logs/bench.log" 2>&1 || rc=1
	$b -test.bench '^BenchmarkAllocFree$' -test.benchtime=2000x >>"$logs/bench.log" 2>&1 || rc=1
	$b -test.bench '^BenchmarkPinned' -test.benchtime=20x >>"$logs/bench.log" 2>&1 || rc=1
done

# Best of the rounds: the least time per operation, the most GB/s. The ratio is always
# cubehip's cost over raw's (time over time, or raw GB/s over cubehip GB/s), so 1.05 is
# 5% slower whichever the unit.
awk '
function keep(k, v, unit) {
	if (!(k in best) || (unit == "GB/s" ? v > best[k] : v < best[k])) best[k] = v
	units[k] = unit
}
$1 == "anchor" { keep("raw " $2, $3, $4) }
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	map["BenchmarkLaunch"] = "launch"; map["BenchmarkLaunchSync"] = "launchsync"
	map["BenchmarkGraphReplay"] = "replay"; map["BenchmarkAllocFree"] = "allocfree"
	map["BenchmarkRead4"] = "read"; map["BenchmarkPinnedHtoD"] = "htod"; map["BenchmarkPinnedDtoH"] = "dtoh"
	for (i = 3; i < NF; i++) if ($(i+1) ~ /^(us\/|GB\/s)/ && $(i+1) != "MB/s") keep("go " map[name], $i, $(i+1))
}
END {
	printf "%-11s %12s %12s %-14s %8s\n", "figure", "raw", "cubehip", "unit", "ratio"
	n = split("launch launchsync replay allocfree read htod dtoh", order, " ")
	for (j = 1; j <= n; j++) {
		f = order[j]; r = best["raw " f]; g = best["go " f]; u = units["raw " f]
		ratio = (r > 0 && g > 0) ? (u == "GB/s" ? r / g : g / r) : 0
		printf "%-11s %12.3f %12.3f %-14s %8.3f%s\n", f, r, g, u, ratio, (ratio > 1.05 ? "  OVER 5%" : "")
	}
}' "$logs/bench.log" | tee "$logs/table.txt"
exit $rc
