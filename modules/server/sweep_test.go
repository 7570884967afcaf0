package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server"
)

// TestFaultSweep is the promise under every single HIP failure the workload can meet.
// The workload (sweepWorld.run: writes, launches chained across three streams, a
// launch whose grid is read from a buffer, small and staged reads, a profile, a
// capture of a write and three launches replayed twice after one of its inputs was
// rewritten and released, a cleanup of the pools, fresh allocations) runs once per
// (HIP function, call index) with exactly that call failed, on both launch paths (the
// launch queue and DirectLaunch; on a platform without a queue of its own the fault
// injector emulates one). After each run, with nothing armed any more:
//
//   - every buffer of the workload reads either the bytes its work would have left or
//     an error, never other bytes (a buffer whose call returned the error may also
//     hold what it held before that call: the caller was told it did not happen);
//   - a buffer written before the fault and never touched again reads its bytes, no
//     error: a failure contaminates no neighbour;
//   - new work on fresh buffers, on each of the three streams, succeeds and reads right;
//   - the device closes without error; nothing panicked; the run ended within
//     sweepTimeout (a hang fails the scenario and the sweep goes on).
//
// The functions and their call counts come from a clean run of the same workload, so a
// change to the workload or the server sweeps what it uses now. Scenarios are named
// path/function#index ("queued/hipEventSynchronize#3"). By default each function is
// failed at a handful of its call indices (the first two, the last two and three
// between) with the status a device most often gives for it: about 180 scenarios, a
// few seconds. Environment:
//
//	CUBEHIP_SWEEP=full       every call index, each with two statuses (about 850)
//	CUBEHIP_SWEEP_ONLY=text  only the scenarios whose name contains text
//
// On a GPU (server.test from scripts/gpu-test.sh, CUBEHIP_PLATFORM=nvidia or amd) it
// sweeps that platform the same way, the fault injector over the real driver.
//
// Scenarios listed in sweepKnownFailures are bugs found and not fixed yet: they are
// reported with t.Log, and a listed scenario that passes fails the test, so the list
// only ever shrinks.
func TestFaultSweep(t *testing.T) {
	full := os.Getenv("CUBEHIP_SWEEP") == "full"
	only := os.Getenv("CUBEHIP_SWEEP_ONLY") // runs only the scenarios whose id has it
	total, failed := 0, 0
	var stats sweepStats
	known := map[string]bool{}
	for _, direct := range []bool{false, true} {
		path := map[bool]string{false: "queued", true: "direct"}[direct]
		counts := sweepCounts(t, direct)
		names := make([]string, 0, len(counts))
		for name := range counts {
			names = append(names, name)
		}
		sort.Strings(names)
		t.Logf("%s: the workload's HIP calls: %v", path, counts)
		for _, name := range names {
			for _, n := range sweepIndices(counts[name], full) {
				for si, status := range sweepStatuses(name, full) {
					id := fmt.Sprintf("%s/%s#%d", path, name, n)
					if si > 0 {
						id += "/" + strings.Fields(status.Error())[0]
					}
					if only != "" && !strings.Contains(id, only) {
						continue
					}
					total++
					problems := sweepScenario(t, direct, name, n, status, &stats)
					if want, listed := sweepKnownFailures[id]; listed {
						known[id] = true
						if len(problems) == 0 {
							t.Errorf("%s is listed in sweepKnownFailures (%s) but passes now: take it off the list", id, want)
						} else {
							t.Logf("known failure %s (%s): %s", id, want, strings.Join(problems, "; "))
						}
						continue
					}
					if len(problems) > 0 {
						failed++
						t.Errorf("%s: %s", id, strings.Join(problems, "; "))
					}
				}
			}
		}
	}
	for id := range sweepKnownFailures {
		if !known[id] && (!full || only != "") {
			// A listed scenario the quick sweep does not reach is checked by the full one.
			continue
		}
		if !known[id] {
			t.Errorf("sweepKnownFailures lists %s, which the sweep no longer runs", id)
		}
	}
	t.Logf("fault sweep: %d scenarios (full=%v), %d failed, %d known failures; after the runs %d reads returned the right bytes and %d an error",
		total, full, failed, len(known), stats.right, stats.failed)
}

// sweepKnownFailures are the sweep's scenarios (path/function#index) that fail today,
// each with what goes wrong.
var sweepKnownFailures = map[string]string{}

// sweepStats sums, over the scenarios, the reads after each run that returned the
// right bytes and those that returned an error.
type sweepStats struct{ right, failed int }

// sweepTimeout bounds one scenario: the workload runs in a few milliseconds, so a run
// past this has hung.
const sweepTimeout = 30 * time.Second

// sweepIndices are the call indices (1-based) to fail among count calls: all of them in
// the full sweep, otherwise the first two, the last two and a few evenly between.
func sweepIndices(count int, full bool) []int {
	if full || count <= 6 {
		out := make([]int, count)
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	set := map[int]bool{1: true, 2: true, count - 1: true, count: true}
	for i := 1; i <= 3; i++ {
		set[1+i*(count-1)/4] = true
	}
	out := make([]int, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// sweepOpen opens a device of the test platform behind a fault injector with the
// sweep's options: small staging chunks, so the larger copies go through the staging
// ring in several pieces, and no kernel disk cache.
func sweepOpen(direct bool) (*server.Device, *faults.Platform, error) {
	p, err := hipsys.Open("auto")
	if err != nil {
		return nil, nil, err
	}
	f := faults.Wrap(p)
	d, err := server.OpenPlatform(f, server.Options{
		DirectLaunch: direct, StagingChunk: 16 << 10, StagingDepth: 2,
		// No disk cache of kernels: the workload's first launch of a kernel compiles it
		// in every scenario, so the compiler's and the loader's calls are swept too.
		CacheDir: "-",
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, nil, err
	}
	return d, f, nil
}

// sweepCounts runs the workload once with nothing armed and counts, per HIP function,
// the calls it makes: the sweep's scenarios.
func sweepCounts(t *testing.T, direct bool) map[string]int {
	t.Helper()
	d, f, err := sweepOpen(direct)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer d.Close()
	w := newSweepWorld(d)
	if err := w.setup(); err != nil {
		t.Fatalf("clean setup: %v", err)
	}
	before := map[string]int{}
	for _, name := range faults.Names() {
		before[name] = f.Calls(name)
	}
	if err := w.run(); err != nil {
		t.Fatalf("the clean workload fails: %v", err)
	}
	counts := map[string]int{}
	for _, name := range faults.Names() {
		if n := f.Calls(name) - before[name]; n > 0 {
			counts[name] = n
		}
	}
	if problems := w.check(); len(problems) > 0 {
		t.Fatalf("the clean workload reads wrong: %s", strings.Join(problems, "; "))
	}
	return counts
}

// sweepScenario runs the workload with the nth call of name failed and returns what
// broke the promise (nothing: it held).
func sweepScenario(t *testing.T, direct bool, name string, n int, status error, st *sweepStats) []string {
	type result struct {
		problems      []string
		right, failed int
	}
	done := make(chan result, 1)
	go func() {
		var problems []string
		var w *sweepWorld
		defer func() {
			if r := recover(); r != nil {
				problems = append(problems, fmt.Sprintf("panic: %v\n%s", r, debug.Stack()))
			}
			res := result{problems: problems}
			if w != nil {
				res.right, res.failed = w.right, w.failed
			}
			done <- res
		}()
		d, f, err := sweepOpen(direct)
		if err != nil {
			problems = append(problems, "open: "+err.Error())
			return
		}
		w = newSweepWorld(d)
		if err := w.setup(); err != nil {
			problems = append(problems, "clean setup: "+err.Error())
			d.Close()
			return
		}
		f.FailNth(name, n, status)
		_ = w.run() // an error is allowed: the checks say whether it was told truly
		f.Reset()
		problems = append(problems, w.check()...)
		if err := d.Close(); err != nil {
			problems = append(problems, "close: "+err.Error())
		}
	}()
	select {
	case r := <-done:
		st.right += r.right
		st.failed += r.failed
		return r.problems
	case <-time.After(sweepTimeout):
		return []string{fmt.Sprintf("hung for %v", sweepTimeout)}
	}
}

// sweepStatuses are the statuses a failing call is made to return: the one a real
// device gives most often for it and, in the full sweep, a second one that takes
// another path (hipErrorNotReady, which a query answers for work still running, or a
// plain invalid value).
func sweepStatuses(name string, full bool) []error {
	var likely, other error = hipsys.ErrorInvalidValue, hipsys.ErrorLaunchFailure
	switch {
	case strings.HasPrefix(name, "hiprtc"):
		likely, other = hipsys.RTCErrorCompilation, hipsys.RTCErrorInternalError
	case name == "hipMalloc" || name == "hipHostMalloc":
		likely, other = hipsys.ErrorOutOfMemory, hipsys.ErrorInvalidValue
	case name == "hipModuleLaunchKernel" || strings.Contains(name, "Synchronize"):
		likely, other = hipsys.ErrorLaunchFailure, hipsys.ErrorInvalidValue
	case strings.HasSuffix(name, "Query"):
		likely, other = hipsys.ErrorLaunchFailure, hipsys.ErrorNotReady
	}
	if !full {
		return []error{likely}
	}
	return []error{likely, other}
}

// sweepN is the element count of the workload's vectors: 4 KiB, a small copy. sweepBig
// is the staged vector's: 80 KiB, past the small-read path, five staging chunks.
const (
	sweepN   = 1024
	sweepBig = 20 << 10
)

// sweepBuf is one buffer of the workload and what may be read from it: want is what
// its work would have left (nil: nothing known, never written); prev, when set, is what
// it held before a call that returned an error (that call may not have happened).
type sweepBuf struct {
	name string
	b    *server.Buffer
	want []float32
	prev []float32 // empty, not nil: never written before that call, any bytes
}

type sweepWorld struct {
	d      *server.Device
	s0     server.Stream
	s1, s2 server.Stream
	bufs   []*sweepBuf
	neigh  *sweepBuf // written before the fault, never touched after
	wrong  []string  // wrong bytes the workload's own reads saw
	// After the run: reads that returned the bytes the work left, and reads that
	// returned an error (the sweep says how many of each, so a sweep in which every
	// read failed would show).
	right, failed int
}

func newSweepWorld(d *server.Device) *sweepWorld {
	return &sweepWorld{d: d, s0: d.Stream, s1: d.On(1), s2: d.On(2)}
}

func seq(n int, f func(i int) float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}

func mapF(v []float32, f func(x float32) float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}

// setup compiles the kernels and writes the neighbour, before any fault is armed.
func (w *sweepWorld) setup() error {
	for _, k := range []*server.Kernel{devScale, devAdd, devInc} {
		if err := w.d.Compile(k); err != nil {
			return err
		}
	}
	b, err := w.s0.Alloc(4 * sweepN)
	if err != nil {
		return err
	}
	w.neigh = &sweepBuf{name: "neighbour", b: b, want: seq(sweepN, func(i int) float32 { return float32(7 * i) })}
	if err := w.s0.Write(b, floatBytes(w.neigh.want...)); err != nil {
		return err
	}
	return w.s0.Sync(b)
}

// alloc is a new buffer of the workload on s.
func (w *sweepWorld) alloc(s server.Stream, name string, n int) (*sweepBuf, error) {
	b, err := s.Alloc(uint64(4 * n))
	if err != nil {
		return nil, fmt.Errorf("alloc %s: %w", name, err)
	}
	sb := &sweepBuf{name: name, b: b}
	w.bufs = append(w.bufs, sb)
	return sb, nil
}

// set records what a call that writes out leaves there: want if it succeeded; if it
// returned an error, either that or what out held before.
func (w *sweepWorld) set(out *sweepBuf, want []float32, err error) error {
	if err != nil && out.prev == nil {
		out.prev = out.want
		if out.prev == nil {
			out.prev = []float32{} // never written: any bytes
		}
	}
	out.want = want
	return err
}

func (w *sweepWorld) write(s server.Stream, out *sweepBuf, v []float32) error {
	return w.set(out, v, s.Write(out.b, floatBytes(v...)))
}

func (w *sweepWorld) scale(s server.Stream, in, out *sweepBuf, a float32) error {
	err := s.Launch(devScale, grid(len(in.want)), server.Args{
		Buffers: []*server.Buffer{in.b, out.b}, Scalars: []server.Scalar{server.F32(a), server.U32(uint32(len(in.want)))}})
	return w.set(out, mapF(in.want, func(x float32) float32 { return a * x }), err)
}

func (w *sweepWorld) add(s server.Stream, x, y, out *sweepBuf) error {
	want := make([]float32, len(x.want))
	for i := range want {
		want[i] = x.want[i] + y.want[i]
	}
	err := s.Launch(devAdd, grid(len(want)), server.Args{
		Buffers: []*server.Buffer{x.b, y.b, out.b}, Scalars: []server.Scalar{server.U32(uint32(len(want)))}})
	return w.set(out, want, err)
}

func (w *sweepWorld) inc(s server.Stream, x *sweepBuf) error {
	err := s.Launch(devInc, grid(len(x.want)), server.Args{
		Buffers: []*server.Buffer{x.b}, Scalars: []server.Scalar{server.U32(uint32(len(x.want)))}})
	return w.set(x, mapF(x.want, func(v float32) float32 { return v + 1 }), err)
}

// read reads b on s now and checks it against the model.
func (w *sweepWorld) read(s server.Stream, b *sweepBuf) error {
	got, err := s.Read(b.b)
	if err != nil {
		return err
	}
	if p := b.judge(got); p != "" {
		w.wrong = append(w.wrong, fmt.Sprintf("%s (read in the workload on stream %d)", p, s.ID()))
		return errors.New(p)
	}
	return nil
}

// run is the workload. It stops at the first error a call returns, as a program would.
func (w *sweepWorld) run() error {
	s0, s1, s2 := w.s0, w.s1, w.s2
	a, err := w.alloc(s0, "a", sweepN)
	if err != nil {
		return err
	}
	if err := w.write(s0, a, seq(sweepN, func(i int) float32 { return float32(i) })); err != nil {
		return err
	}
	big, err := w.alloc(s0, "big", sweepBig)
	if err != nil {
		return err
	}
	if err := w.write(s0, big, seq(sweepBig, func(i int) float32 { return float32(i%251) + 0.5 })); err != nil {
		return err
	}
	// A chain across streams: c on s0, e on s1 from c and a, e incremented on s2.
	c, err := w.alloc(s0, "c", sweepN)
	if err != nil {
		return err
	}
	if err := w.scale(s0, a, c, 2); err != nil {
		return err
	}
	e, err := w.alloc(s1, "e", sweepN)
	if err != nil {
		return err
	}
	if err := w.add(s1, c, a, e); err != nil {
		return err
	}
	if err := w.inc(s2, e); err != nil {
		return err
	}
	// A launch whose grid is read from a buffer written on another stream.
	count, err := w.alloc(s0, "count", 3)
	if err != nil {
		return err
	}
	u := math.Float32frombits // the counts are uint32s; the model holds floats
	if err := w.write(s0, count, []float32{u(sweepN / 64), u(1), u(1)}); err != nil {
		return err
	}
	ramp, err := w.alloc(s2, "ramp", sweepN)
	if err != nil {
		return err
	}
	err = s2.LaunchDynamic(devIota, count.b, server.Args{Buffers: []*server.Buffer{ramp.b}, Info: []uint64{sweepN, 5}})
	if err := w.set(ramp, seq(sweepN, func(i int) float32 { return float32(5 * i) }), err); err != nil {
		return err
	}
	// The big vector scaled in place on s1 through a temporary, which is then released.
	tmp, err := w.alloc(s1, "tmp", sweepBig)
	if err != nil {
		return err
	}
	if err := w.scale(s1, big, tmp, 3); err != nil {
		return err
	}
	if err := w.scale(s1, tmp, big, 0.5); err != nil {
		return err
	}
	// A read on another stream than the writer's, small (one copy) and staged (ring).
	if err := w.read(s0, e); err != nil {
		return err
	}
	if err := w.read(s2, big); err != nil {
		return err
	}
	w.bufs = slices.DeleteFunc(w.bufs, func(b *sweepBuf) bool { return b == tmp })
	if err := tmp.b.Release(); err != nil {
		return fmt.Errorf("release tmp: %w", err)
	}
	// The pools give their free memory back, so the next allocations take new memory.
	if err := w.d.Cleanup(); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	// A profiled launch.
	f, err := w.alloc(s1, "f", sweepN)
	if err != nil {
		return err
	}
	if _, err := s1.Profile(func() error { return w.scale(s1, e, f, 4) }); err != nil {
		return err
	}
	// A capture on s2 of a write and three launches (g = 2e+1, gk = g+k), replayed
	// twice after e was rewritten and then released: the graph keeps e alive, so the
	// fresh buffer h allocated in between must not share its memory.
	g, err := w.alloc(s2, "g", sweepN)
	if err != nil {
		return err
	}
	k, err := w.alloc(s2, "k", sweepN)
	if err != nil {
		return err
	}
	gk, err := w.alloc(s2, "gk", sweepN)
	if err != nil {
		return err
	}
	work := func(s server.Stream) error {
		if err := w.write(s, k, seq(sweepN, func(i int) float32 { return float32(i % 7) })); err != nil {
			return err
		}
		if err := w.scale(s, e, g, 2); err != nil {
			return err
		}
		if err := w.inc(s, g); err != nil {
			return err
		}
		return w.add(s, g, k, gk)
	}
	before := map[*sweepBuf][]float32{g: g.want, k: k.want, gk: gk.want}
	graph, err := s2.Capture(work)
	if err != nil {
		// The warm-up ran the work for real; the recording may be refused after it,
		// and then each output holds the warm-up's bytes, what it held before, or the
		// failure.
		for b, was := range before {
			if b.prev == nil {
				b.prev = was
				if b.prev == nil {
					b.prev = []float32{}
				}
			}
		}
		return err
	}
	if err := w.write(s2, e, seq(sweepN, func(i int) float32 { return float32(-i) })); err != nil {
		_ = graph.Destroy()
		return err
	}
	eNew := e.want
	w.bufs = slices.DeleteFunc(w.bufs, func(b *sweepBuf) bool { return b == e })
	if err := e.b.Release(); err != nil {
		_ = graph.Destroy()
		return fmt.Errorf("release e: %w", err)
	}
	h, err := w.alloc(s2, "h", sweepN)
	if err != nil {
		_ = graph.Destroy()
		return err
	}
	if err := w.write(s2, h, seq(sweepN, func(i int) float32 { return float32(3 * i) })); err != nil {
		_ = graph.Destroy()
		return err
	}
	// A replay recomputes g and gk from the new e, and rewrites k.
	wantG := mapF(eNew, func(x float32) float32 { return 2*x + 1 })
	wantGK := make([]float32, sweepN)
	for i := range wantGK {
		wantGK[i] = wantG[i] + k.want[i]
	}
	for range 2 {
		err := graph.Replay()
		w.set(k, k.want, err)
		w.set(g, wantG, err)
		if err := w.set(gk, wantGK, err); err != nil {
			_ = graph.Destroy()
			return err
		}
	}
	if err := graph.Destroy(); err != nil {
		return fmt.Errorf("destroy: %w", err)
	}
	for _, b := range []*sweepBuf{g, gk, h} {
		if err := w.read(s0, b); err != nil {
			return err
		}
	}
	// A fresh allocation on another stream, written and read.
	h1, err := w.alloc(s1, "h1", sweepN)
	if err != nil {
		return err
	}
	if err := w.write(s1, h1, seq(sweepN, func(i int) float32 { return float32(11 * i) })); err != nil {
		return err
	}
	return w.read(s1, h1)
}

// judge says what is wrong with got as b's bytes ("": nothing).
func (b *sweepBuf) judge(got []byte) string {
	if b.want != nil && bytes.Equal(got, floatBytes(b.want...)) {
		return ""
	}
	if b.prev != nil && (len(b.prev) == 0 || bytes.Equal(got, floatBytes(b.prev...))) {
		return ""
	}
	if b.want == nil {
		return "" // never written: nothing to hold it to
	}
	return fmt.Sprintf("%s read wrong bytes with no error: %s, want %s", b.name, sweepShow(byteFloats(got)), sweepShow(b.want))
}

func sweepShow(v []float32) string {
	if len(v) > 4 {
		return fmt.Sprintf("%v... (%d)", v[:4], len(v))
	}
	return fmt.Sprint(v)
}

// check reads every buffer with nothing armed, then does new work on fresh buffers; it
// returns each broken promise.
func (w *sweepWorld) check() []string {
	problems := w.wrong
	for _, b := range w.bufs {
		for _, s := range []server.Stream{w.s0, w.d.On(3)} {
			got, err := s.Read(b.b)
			if err != nil {
				w.failed++
				continue // an error is always an allowed answer
			}
			if p := b.judge(got); p != "" {
				problems = append(problems, fmt.Sprintf("%s (read on stream %d)", p, s.ID()))
			} else if b.want != nil && bytes.Equal(got, floatBytes(b.want...)) {
				w.right++
			}
		}
	}
	got, err := w.s0.Read(w.neigh.b)
	if err != nil {
		problems = append(problems, "the neighbour, untouched since before the fault, fails: "+err.Error())
	} else if p := w.neigh.judge(got); p != "" {
		problems = append(problems, "the neighbour: "+p)
	}
	for _, s := range []server.Stream{w.s0, w.s1, w.s2} {
		if err := w.fresh(s); err != nil {
			problems = append(problems, fmt.Sprintf("new work on stream %d: %v", s.ID(), err))
		}
	}
	for _, b := range w.bufs {
		if err := b.b.Release(); err != nil {
			problems = append(problems, fmt.Sprintf("release %s: %v", b.name, err))
		}
	}
	if err := w.neigh.b.Release(); err != nil {
		problems = append(problems, "release the neighbour: "+err.Error())
	}
	return problems
}

// fresh is new work on fresh buffers: write, scale, read.
func (w *sweepWorld) fresh(s server.Stream) error {
	x, err := s.Alloc(4 * sweepN)
	if err != nil {
		return err
	}
	defer x.Release()
	y, err := s.Alloc(4 * sweepN)
	if err != nil {
		return err
	}
	defer y.Release()
	in := seq(sweepN, func(i int) float32 { return float32(i + 1) })
	if err := s.Write(x, floatBytes(in...)); err != nil {
		return err
	}
	if err := s.Launch(devScale, grid(sweepN), server.Args{
		Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(-1), server.U32(sweepN)}}); err != nil {
		return err
	}
	got, err := s.Read(y)
	if err != nil {
		return err
	}
	if want := floatBytes(mapF(in, func(v float32) float32 { return -v })...); !bytes.Equal(got, want) {
		return errors.New("reads wrong bytes")
	}
	return nil
}
