#!/usr/bin/env bash
# diag.sh runs the experiments that place a gap between the anchor and cubehip's graph
# replay and 4-byte read (run.sh's table), on the GPU machine, from build/gpu:
#   anchor / thr2 / idle8   the C anchor on its main thread; with the driver loaded on the
#                           main thread and used on another (as in a Go process); beside
#                           8 idle threads (as a Go runtime keeps)
#   Benchmark / NOPRE       the Go benchmarks and the anchor's loop inside Go (Raw), with
#                           and without Go's asynchronous preemption
#   pin1 / PIN2 / pin2      the anchor and the Go benchmarks held to one or two CPUs
# Every line carries the spread of the loop's iterations (ANCHOR_HIST, CUBEHIP_BENCH_HIST),
# and clocks.csv the GPU's clocks every 200 ms, so a slower GPU reads apart from a slower
# host. Usage: diag.sh [logdir]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${1:-./gpu-logs}"
mkdir -p "$logs"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,pstate,power.draw,pcie.link.gen.current \
	--format=csv,noheader -lms 200 >"$logs/clocks.csv" 2>&1 &
smi=$!
export ANCHOR_HIST=1 CUBEHIP_BENCH_HIST=1
sel='^Benchmark(Raw)?(GraphReplay|Read4)$'
b() { "$here/nvidia.test" -test.run '^$' -test.benchtime=20000x -test.bench "$sel" "$@" 2>&1 | grep -E '^(Bench|hist|anchor)'; }
a() { "$here/anchor" 2>&1 | grep -E '^(anchor (replay|read|launch )|hist)'; }
for round in 1 2; do
	echo "== round $round $(date +%T.%N)"
	a
	ANCHOR_THREAD=2 a | sed 's/^/thr2 /'
	ANCHOR_IDLE=8 a | sed 's/^/idle8 /'
	b
	GODEBUG=asyncpreemptoff=1 b | sed 's/^/NOPRE /'
	taskset -c 5 "$here/anchor" 2>&1 | grep -E '^(anchor (replay|read)|hist)' | sed 's/^/pin1 /'
	taskset -c 5,6 "$here/anchor" 2>&1 | grep -E '^(anchor (replay|read)|hist)' | sed 's/^/pin2 /'
	taskset -c 5,6 "$here/nvidia.test" -test.run '^$' -test.benchtime=20000x -test.bench "$sel" 2>&1 | grep '^Bench' | sed 's/^/PIN2 /'
	b -test.count=3 | sed 's/^/COUNT3 /'
done
kill "$smi"
