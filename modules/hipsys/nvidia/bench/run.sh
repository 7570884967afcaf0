#!/usr/bin/env bash
# run.sh runs the binaries scripts/gpu-test.sh built, on a GPU machine without Go, and
# writes its logs to the folder given (default ./gpu-logs):
#   conformance.log  the conformance suite against the nvidia platform
#   nvidia.log       the nvidia platform's own tests
#   bench.log        five rounds of the raw-driver anchor and the Go benchmarks, in turn,
#                    then two of the Go benchmarks with GOMAXPROCS=1
#   table.txt        each figure's median over the rounds, raw against cubehip
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${1:-./gpu-logs}"
mkdir -p "$logs"
rc=0

"$here/conformance.test" -test.run TestNvidia -test.v -test.timeout=300s >"$logs/conformance.log" 2>&1 || rc=1
tail -n 3 "$logs/conformance.log"
"$here/nvidia.test" -test.v -test.timeout=300s >"$logs/nvidia.log" 2>&1 || rc=1
tail -n 3 "$logs/nvidia.log"

# The GPU idles at a low clock: one anchor run first, discarded, brings it up.
"$here/anchor" >/dev/null 2>&1
: >"$logs/bench.log"
bench() {
	local b="$here/nvidia.test -test.run ^$ -test.benchmem"
	$b -test.bench '^BenchmarkLaunch$' -test.benchtime=100000x || return 1
	$b -test.bench '^Benchmark(LaunchSync|GraphReplay|Read4|StreamQuery|CgoCall)$' -test.benchtime=20000x || return 1
	$b -test.bench '^BenchmarkAllocFree$' -test.benchtime=2000x || return 1
	$b -test.bench '^BenchmarkPinned' -test.benchtime=20x
}
for round in 1 2 3 4 5; do
	echo "round $round" >>"$logs/bench.log"
	"$here/anchor" >>"$logs/bench.log" 2>&1 || rc=1
	bench >>"$logs/bench.log" 2>&1 || rc=1
done
# The same with the Go scheduler on one processor: whatever differs from the default is
# the scheduler's doing (threads spinning for work beside the one in the driver).
for round in 1 2; do
	echo "round gomaxprocs1-$round" >>"$logs/bench.log"
	GOMAXPROCS=1 bench 2>&1 | sed 's/^Benchmark/P1Benchmark/' >>"$logs/bench.log" || rc=1
done
# And with the benchmark goroutine locked to its OS thread.
for round in 1 2; do
	echo "round locked-$round" >>"$logs/bench.log"
	CUBEHIP_BENCH_LOCK=1 bench 2>&1 | sed 's/^Benchmark/LKBenchmark/' >>"$logs/bench.log" || rc=1
done

# Each figure's median over the rounds, raw and through cubehip, and their ratio, always
# cubehip's cost over raw's (time over time, or raw GB/s over cubehip GB/s), so 1.05 is
# 5% slower whichever the unit. P1 is cubehip with GOMAXPROCS=1, locked with the
# benchmark goroutine locked to its OS thread.
awk '
function med(key,   n, i, j, t, a) {
	n = cnt[key]; if (n == 0) return 0
	for (i = 1; i <= n; i++) a[i] = val[key, i]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function add(key, v, unit) { val[key, ++cnt[key]] = v; units[key] = unit }
BEGIN {
	map["Launch"] = "launch"; map["LaunchSync"] = "launchsync"; map["GraphReplay"] = "replay"
	map["AllocFree"] = "allocfree"; map["Read4"] = "read"; map["StreamQuery"] = "query"
	map["CgoCall"] = "cgocall"; map["PinnedHtoD"] = "htod"; map["PinnedDtoH"] = "dtoh"
}
$1 == "anchor" { add("raw " $2, $3, $4) }
/^(P1|LK)?Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); side = "go"
	if (name ~ /^P1/) { side = "p1"; sub(/^P1/, "", name) }
	if (name ~ /^LK/) { side = "lk"; sub(/^LK/, "", name) }
	sub(/^Benchmark/, "", name)
	for (i = 3; i < NF; i++) if ($(i+1) ~ /^(us\/|GB\/s)/) add(side " " map[name], $i, $(i+1))
}
END {
	printf "%-11s %10s %10s %-14s %7s %10s %7s %10s %7s\n", "figure", "raw", "cubehip", "unit", "ratio", "P1", "ratio", "locked", "ratio"
	n = split("launch launchsync replay allocfree read query htod dtoh cgocall", order, " ")
	for (j = 1; j <= n; j++) {
		f = order[j]; r = med("raw " f); g = med("go " f); q = med("p1 " f); u = units["go " f]
		gb = (u == "GB/s")
		rg = (r > 0 && g > 0) ? (gb ? r / g : g / r) : 0
		rq = (r > 0 && q > 0) ? (gb ? r / q : q / r) : 0
		l = med("lk " f); rl = (r > 0 && l > 0) ? (gb ? r / l : l / r) : 0
		printf "%-11s %10.3f %10.3f %-14s %7.3f %10.3f %7.3f %10.3f %7.3f%s\n", f, r, g, u, rg, q, rq, l, rl, (rg > 1.05 ? "  OVER 5%" : "")
	}
}' "$logs/bench.log" | tee "$logs/table.txt"
exit $rc
