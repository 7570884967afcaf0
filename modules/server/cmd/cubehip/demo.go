package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server"
)

// demoSource is the demo's HIP C++: unmodified, it compiles for AMD and NVIDIA GPUs and
// for the embedded cpu device.
const demoSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void scale(const float* in, float* out, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * in[i];
}
extern "C" __global__ void ramp(float* out, const unsigned long long* info) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < info[0]) out[i] = (float)i * (float)info[1];
}
`

var (
	block = hipsys.Dim3{X: 256, Y: 1, Z: 1}
	// Each kernel declares what it does with each buffer: the failure model's input.
	saxpyK = server.NewKernel(demoSource, "saxpy", block, []server.Access{server.Read, server.ReadWrite}, "-O3")
	scaleK = server.NewKernel(demoSource, "scale", block, []server.Access{server.Read, server.Write}, "-O3")
	rampK  = server.NewKernel(demoSource, "ramp", block, []server.Access{server.Write}, "-O3")
)

// runDemo is the main job, on the default device: compile, copy, launch, capture and
// replay a graph, profile, report memory, and catch an injected failure on exactly the
// buffers it touched. Every result is checked against Go.
func runDemo(out io.Writer, args []string) error {
	fs := flags("demo", out)
	platform, device := deviceFlags(fs)
	n := fs.Int("n", 1<<20, "elements per vector")
	check := fs.String("check", "", "run every kernel under the kernel checker (cpu device): memcheck, initcheck, synccheck, racecheck, or all")
	if done, err := parseNoArgs(fs, args); done {
		return err
	}
	if *n < 1 || *n > 1<<28 {
		return fmt.Errorf("-n %d: want 1 to %d elements", *n, 1<<28)
	}
	checks, err := hipsys.ParseChecks(*check)
	if err != nil {
		return fmt.Errorf("-check: %w", err)
	}
	p, err := hipsys.Open(*platform)
	if err != nil {
		return err
	}
	// The demo's own fault injector: nothing fails until step 7 arms it.
	inject := faults.Wrap(p)
	d, err := server.OpenPlatform(inject, server.Options{Index: *device, Logger: slog.New(slog.DiscardHandler), Check: checks})
	if err != nil {
		return err
	}
	defer d.Close()
	r := &report{out: out, d: d, n: *n, inject: inject}
	fmt.Fprintf(out, "cubehip demo on %s device %d: %s (%s), %d elements per vector\n\n",
		d.Platform(), d.Index(), d.Props().Name, d.Props().ArchName, *n)
	steps := []struct {
		title string
		run   func() error
	}{
		{"compile", r.compile},
		{"copy", r.copy},
		{"launch", r.launch},
		{"graph", r.graph},
		{"profile", r.profile},
		{"memory", r.memory},
		{"failure", r.failure},
	}
	for i, s := range steps {
		fmt.Fprintf(out, "%d. %s\n", i+1, s.title)
		if err := s.run(); err != nil {
			return fmt.Errorf("%s: %w", s.title, err)
		}
	}
	r.releaseAll()
	u, err := d.MemoryUsage()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\ndone: every result matched Go; %d allocations left after release\n", u.NumberAllocs)
	return nil
}

// report is the demo's state: the device, its buffers and the writer.
type report struct {
	out    io.Writer
	d      *server.Device
	n      int
	inject *faults.Platform
	x, y   *server.Buffer
	xs, ys []float32 // what x and y hold, kept in Go to check the device against
	owned  []*server.Buffer
}

func (r *report) line(format string, a ...any) { fmt.Fprintf(r.out, "   "+format+"\n", a...) }

func (r *report) alloc(n int) (*server.Buffer, error) {
	b, err := r.d.Alloc(uint64(4 * n))
	if err == nil {
		r.owned = append(r.owned, b)
	}
	return b, err
}

func (r *report) releaseAll() {
	for _, b := range r.owned {
		_ = b.Release()
	}
	r.owned = nil
	_ = r.d.Cleanup()
}

func (r *report) compile() error {
	for _, k := range []*server.Kernel{saxpyK, scaleK, rampK} {
		t := time.Now()
		if err := r.d.Compile(k); err != nil {
			return err
		}
		r.line("%-6s %8s  (%s, or the kernel cache on a later run)", k.Entry(), ms(time.Since(t)), compilerOf(r.d.Platform()))
	}
	return nil
}

func (r *report) copy() error {
	var err error
	if r.x, err = r.alloc(r.n); err != nil {
		return err
	}
	if r.y, err = r.alloc(r.n); err != nil {
		return err
	}
	r.xs, r.ys = make([]float32, r.n), make([]float32, r.n)
	for i := range r.xs {
		r.xs[i], r.ys[i] = float32(i%1000), 1
	}
	// The first copy takes the pinned staging from the device (a one-time cost): shown
	// apart, then the steady-state rates, the best of three copies each way.
	t := time.Now()
	if err := errors.Join(r.d.Write(r.x, bytesOf(r.xs)), r.d.Write(r.y, bytesOf(r.ys)), r.d.Sync()); err != nil {
		return err
	}
	r.line("first copy (takes the pinned staging, once per device): %s in %s", mib(8*r.n), ms(time.Since(t)))
	write := func() error {
		return errors.Join(r.d.Write(r.x, bytesOf(r.xs)), r.d.Write(r.y, bytesOf(r.ys)), r.d.Sync())
	}
	el, err := best(3, write)
	if err != nil {
		return err
	}
	r.line("wrote x and y from Go memory: %s in %s (%s), through pinned staging", mib(8*r.n), ms(el), gbs(8*r.n, el))
	back := make([]float32, r.n)
	el, err = best(3, func() error { return server.ReadSliceInto(r.d.Stream, back, r.x) })
	if err != nil {
		return err
	}
	if err := same(back, r.xs); err != nil {
		return fmt.Errorf("x read back: %w", err)
	}
	r.line("read x back: %s in %s (%s), identical", mib(4*r.n), ms(el), gbs(4*r.n, el))
	return nil
}

// best is the shortest of n runs of f.
func best(n int, f func() error) (time.Duration, error) {
	var min time.Duration
	for i := range n {
		t := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if el := time.Since(t); i == 0 || el < min {
			min = el
		}
	}
	return min, nil
}

// compilerOf names the platform's kernel compiler.
func compilerOf(platform string) string {
	switch platform {
	case "cpu":
		return "g++"
	case "nvidia":
		return "NVRTC"
	}
	return "hiprtc"
}

func (r *report) launch() error {
	g := blocks(r.n)
	saxpy := server.Args{Buffers: []*server.Buffer{r.x, r.y}, Scalars: []server.Scalar{server.F32(2), server.U32(uint32(r.n))}}
	t := time.Now()
	if err := r.d.Launch(saxpyK, g, saxpy); err != nil {
		return err
	}
	enq := time.Since(t)
	for i := range r.ys {
		r.ys[i] += 2 * r.xs[i]
	}
	if err := r.check(r.y, r.ys, "y"); err != nil {
		return err
	}
	r.line("saxpy  y = 2x + y over %d blocks of %d: enqueued in %s, result checked", g.X, block.X, us(enq))

	ramp, err := r.alloc(r.n)
	if err != nil {
		return err
	}
	// Info words travel as a device buffer uploaded once per distinct content.
	if err := r.d.Launch(rampK, g, server.Args{Buffers: []*server.Buffer{ramp}, Info: []uint64{uint64(r.n), 3}}); err != nil {
		return err
	}
	want := make([]float32, r.n)
	for i := range want {
		want[i] = float32(i) * 3
	}
	if err := r.check(ramp, want, "ramp"); err != nil {
		return err
	}
	r.line("ramp   out[i] = i * info[1], with info words {n, 3}: checked")
	return nil
}

func (r *report) graph() error {
	g := blocks(r.n)
	args := server.Args{Buffers: []*server.Buffer{r.x, r.y}, Scalars: []server.Scalar{server.F32(1), server.U32(uint32(r.n))}}
	graph, err := r.d.Capture(func(s server.Stream) error {
		for range 3 {
			if err := s.Launch(saxpyK, g, args); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer graph.Destroy()
	const replays = 10
	el, err := r.d.Profile(func() error {
		for range replays {
			if err := graph.Replay(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The warm-up ran the three launches once for real, and each replay three more.
	for i := range r.ys {
		r.ys[i] += float32(3*(1+replays)) * r.xs[i]
	}
	if err := r.check(r.y, r.ys, "y"); err != nil {
		return err
	}
	r.line("captured 3 saxpy launches; %d replays in %s of device time (%s each); y checked", replays, ms(el), us(el/replays))
	return nil
}

func (r *report) profile() error {
	out, err := r.alloc(r.n)
	if err != nil {
		return err
	}
	for _, a := range []float32{0.5, 4} {
		el, err := r.d.Profile(func() error {
			return r.d.Launch(scaleK, blocks(r.n), server.Args{Buffers: []*server.Buffer{r.x, out}, Scalars: []server.Scalar{server.F32(a), server.U32(uint32(r.n))}})
		})
		if err != nil {
			return err
		}
		r.line("scale by %-3v %10s device time (%s moved)", a, us(el), gbs(8*r.n, el))
	}
	return nil
}

func (r *report) memory() error {
	u, err := r.d.MemoryUsage()
	if err != nil {
		return err
	}
	r.line("in use: %d allocations, %s requested, %s reserved from the device", u.NumberAllocs, mib(int(u.BytesInUse)), mib(int(u.BytesReserved)))
	reports, err := r.d.MemoryReport()
	if err != nil {
		return err
	}
	for _, sr := range reports {
		for _, pr := range sr.Report.Dynamic {
			if pr.Pages == 0 && pr.Usage.NumberAllocs == 0 {
				continue
			}
			r.line("stream %d pool %-40v %2d page(s), %2d alloc(s), %s in use", sr.Stream, pr.Spec, pr.Pages, pr.Usage.NumberAllocs, mib(int(pr.Usage.BytesInUse)))
		}
	}
	return nil
}

// failure arms an injected hipModuleLaunchKernel failure on the second of three
// launches, and shows that exactly that launch's output carries it.
func (r *report) failure() error {
	outs := make([]*server.Buffer, 3)
	for i := range outs {
		var err error
		if outs[i], err = r.alloc(r.n); err != nil {
			return err
		}
	}
	r.inject.FailNth("hipModuleLaunchKernel", 2, hipsys.ErrorLaunchFailure)
	r.line("injected: the 2nd hipModuleLaunchKernel from now fails with hipErrorLaunchFailure")
	for i, o := range outs {
		err := r.d.Launch(scaleK, blocks(r.n), server.Args{Buffers: []*server.Buffer{r.x, o}, Scalars: []server.Scalar{server.F32(float32(i + 1)), server.U32(uint32(r.n))}})
		r.line("launch %d: scale x into out%d: Launch returned %v", i+1, i+1, err)
	}
	for i, o := range append([]*server.Buffer{r.x}, outs...) {
		name := "x (read by all)"
		if i > 0 {
			name = fmt.Sprintf("out%d", i)
		}
		_, err := r.d.Read(o)
		if err != nil {
			r.line("read %-16s FAILED: %v", name, err)
		} else {
			r.line("read %-16s ok", name)
		}
	}
	if _, err := r.d.Read(outs[1]); !errors.Is(err, hipsys.ErrorLaunchFailure) {
		return fmt.Errorf("out2 should carry the injected failure, got %v", err)
	}
	// A consumer inherits the failure instead of reading bytes nothing wrote.
	sum := outs[2]
	_ = r.d.Launch(saxpyK, blocks(r.n), server.Args{Buffers: []*server.Buffer{outs[1], sum}, Scalars: []server.Scalar{server.F32(1), server.U32(uint32(r.n))}})
	inherited := r.d.Check(sum)
	if !errors.Is(inherited, hipsys.ErrorLaunchFailure) {
		return fmt.Errorf("out3 should inherit out2's failure, got %v", inherited)
	}
	r.line("saxpy reading out2 into out3: did not run; out3 now carries out2's failure (hipErrorLaunchFailure)")
	// Rewriting the buffer heals it.
	if err := r.d.Write(outs[1], make([]byte, 4*r.n)); err != nil {
		return err
	}
	_, err := r.d.Read(outs[1])
	r.line("rewrote out2 from Go memory: read now returns %v", err)
	return err
}

func (r *report) check(b *server.Buffer, want []float32, name string) error {
	data, err := r.d.Read(b)
	if err != nil {
		return err
	}
	if err := same(floatsOf(data), want); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
