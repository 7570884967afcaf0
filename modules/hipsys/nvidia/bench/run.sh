#!/usr/bin/env bash
# run.sh runs the binaries scripts/gpu-test.sh built, on a GPU machine without Go, and
# writes its logs to the folder given (default ./gpu-logs):
#   conformance.log  the conformance suite against the nvidia platform
#   nvidia.log       the nvidia platform's own tests
#   bench.log        ROUNDS (default 5) rounds of the raw-driver anchor and the Go
#                    benchmarks, in turn
#   table.txt        each figure's median over the rounds, raw against cubehip
#   interleaved.log  the Go paths against the anchor's C loops in one process, interleaved
#   server.log       the server module's tests on the nvidia platform
#   server-bench.log the Device benchmarks beside hipsys, ROUNDS rounds; each graph
#                    replay in a process of its own (bench_test.go says why)
#   cubehip-bench.txt  `cubehip bench` against the anchor
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
# Each line is one process, in the anchor's order. The multi-stream replay has a process
# of its own: once a second stream has launched a graph, the driver's slower replay
# regime lasts for the rest of the process (bench_test.go says more).
bench() {
	local b="$here/nvidia.test -test.run ^$ -test.benchmem"
	$b -test.bench '^Benchmark(Raw)?Launch$' -test.benchtime=100000x || return 1
	$b -test.bench '^Benchmark(Raw)?(LaunchSync|GraphReplay|Read4|StreamQuery|CgoCall)$' -test.benchtime=20000x || return 1
	$b -test.bench '^Benchmark(Raw)?GraphReplayMulti$' -test.benchtime=20000x || return 1
	$b -test.bench '^BenchmarkAllocFree$' -test.benchtime=2000x || return 1
	$b -test.bench '^BenchmarkPinned' -test.benchtime=20x
}
for round in $(seq 1 "${ROUNDS:-5}"); do
	echo "round $round" >>"$logs/bench.log"
	"$here/anchor" >>"$logs/bench.log" 2>&1 || rc=1
	bench >>"$logs/bench.log" 2>&1 || rc=1
done

# The Go paths against the anchor's loops run in C in the same process, interleaved:
# the comparison that one process's luck cannot tilt (bench_test.go's BenchmarkInterleaved).
"$here/nvidia.test" -test.run '^$' -test.bench '^BenchmarkInterleaved$' -test.benchtime=1x >"$logs/interleaved.log" 2>&1 || rc=1
grep '^BenchmarkInterleaved' "$logs/interleaved.log" | tr '\t' '\n' | sed 's/^ *//' | grep -- '-x$\|-x-q[13]$\|-us$'

if [ -x "$here/server.test" ]; then
	export CUBEHIP_PLATFORM=nvidia
	"$here/server.test" -test.v -test.timeout=300s >"$logs/server.log" 2>&1 || rc=1
	tail -n 1 "$logs/server.log"
	: >"$logs/server-bench.log"
	for round in $(seq 1 "${ROUNDS:-5}"); do
		s="$here/server.test -test.run ^$ -test.benchmem"
		for one in BenchmarkDeviceGraphReplay10 BenchmarkHipsysGraphReplay10; do
			$s -test.bench "^$one\$" -test.benchtime=20000x >>"$logs/server-bench.log" 2>&1 || rc=1
		done
		$s -test.bench '^Benchmark(Device|Hipsys)(Launch|AllocFree1MiB|Read4B)$' -test.benchtime=20000x >>"$logs/server-bench.log" 2>&1 || rc=1
		$s -test.bench '^Benchmark(Device(Write|Read)256MiB|HipsysCopy256MiB)$' -test.benchtime=10x >>"$logs/server-bench.log" 2>&1 || rc=1
	done
	# Where the Device's cost per launch and read sits, the layers interleaved in one process.
	"$here/server.test" -test.run '^$' -test.bench '^BenchmarkLayers$' -test.benchtime=1x >>"$logs/server-bench.log" 2>&1 || rc=1
	grep '^BenchmarkLayers' "$logs/server-bench.log"
	grep '^Benchmark' "$logs/server-bench.log" | grep -v Layers | awk '{ name = $1; sub(/-[0-9]+$/, "", name); v[name] = v[name] " " $5 } END { for (n in v) print n ":" v[n] }' | sort
	(cd "$here" && ./cubehip bench -anchor "$here/anchor") >"$logs/cubehip-bench.txt" 2>&1 || rc=1
	tail -n 12 "$logs/cubehip-bench.txt"
fi

# Each figure's median over the rounds, raw and through cubehip, and their ratio, always
# cubehip's cost over raw's (time over time, or raw GB/s over cubehip GB/s), so 1.05 is
# 5% slower whichever the unit. raw-in-Go is the anchor's loop run in C inside the Go
# test process (rawloop.go), with its ratio to raw. replay-late is the anchor's replay
# after its copies (no Go counterpart): it shows that null-stream work keeps the fast
# single-stream replay.
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
	map["GraphReplayMulti"] = "replay-multi"
	map["AllocFree"] = "allocfree"; map["Read4"] = "read"; map["StreamQuery"] = "query"
	map["CgoCall"] = "cgocall"; map["PinnedHtoD"] = "htod"; map["PinnedDtoH"] = "dtoh"
}
$1 == "anchor" { add("raw " $2, $3, $4) }
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); side = "go"
	sub(/^Benchmark/, "", name)
	if (name ~ /^Raw/) { side = "in"; sub(/^Raw/, "", name) }
	for (i = 3; i < NF; i++) if ($(i+1) ~ /^(us\/|GB\/s)/) add(side " " map[name], $i, $(i+1))
}
END {
	printf "%-13s %9s %9s %-14s %6s %9s %6s\n", "figure", "raw", "cubehip", "unit", "ratio", "raw-in-Go", "ratio"
	n = split("launch launchsync replay replay-late replay-multi allocfree read query htod dtoh pageable-htod pageable-dtoh cgocall", order, " ")
	for (j = 1; j <= n; j++) {
		f = order[j]; r = med("raw " f); g = med("go " f); u = units["go " f]; if (u == "") u = units["raw " f]
		gb = (u == "GB/s")
		rg = (r > 0 && g > 0) ? (gb ? r / g : g / r) : 0
		c = med("in " f); rc = (r > 0 && c > 0) ? (gb ? r / c : c / r) : 0
		printf "%-13s %9.3f %9.3f %-14s %6.3f %9.3f %6.3f%s\n", f, r, g, u, rg, c, rc, (rg > 1.05 ? "  OVER 5%" : "")
	}
}' "$logs/bench.log" | tee "$logs/table.txt"
exit $rc
