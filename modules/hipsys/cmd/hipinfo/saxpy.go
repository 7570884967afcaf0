package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/cubehip/cubehip/modules/hipsys"
)

const saxpySource = `#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
`

// runSaxpy is the main job in miniature: compile, upload, launch, capture, replay,
// download, and check against the same arithmetic done in Go.
func runSaxpy(w io.Writer, p hipsys.Platform, n int) error {
	props, err := p.GetDeviceProperties(0)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nrunning saxpy (n=%d) on %s: %s\n", n, p.Name(), props.Name)

	fn, err := compile(p, saxpySource, "saxpy")
	if err != nil {
		return err
	}
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i%1000), 1
	}
	bytes := uint64(4 * n)
	dx, err := p.Malloc(bytes)
	if err != nil {
		return err
	}
	defer p.Free(dx)
	dy, err := p.Malloc(bytes)
	if err != nil {
		return err
	}
	defer p.Free(dy)
	if err := p.MemcpyHtoD(dx, f32bytes(x)); err != nil {
		return err
	}
	if err := p.MemcpyHtoD(dy, f32bytes(y)); err != nil {
		return err
	}

	stream, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	if err != nil {
		return err
	}
	defer p.StreamDestroy(stream)
	start, stop, err := eventPair(p)
	if err != nil {
		return err
	}
	const block = 256
	grid := hipsys.Dim3{X: uint32((n + block - 1) / block), Y: 1, Z: 1}
	var args hipsys.KernelArgs
	args.F32(2).Ptr(dx).Ptr(dy).U32(uint32(n))

	// One launch, timed by device events.
	if err := timed(p, stream, start, stop, func() error {
		return p.ModuleLaunchKernel(fn, grid, hipsys.Dim3{X: block, Y: 1, Z: 1}, 0, stream, &args)
	}); err != nil {
		return err
	}
	ms, err := p.EventElapsedTime(start, stop)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  launch:  y = 2x + y        %8.3f ms  (%.1f GB/s)\n", ms, gbps(3*bytes, ms))

	// The same launch captured into a graph, then replayed: y = 2x + y, ten more times.
	const replays = 10
	if err := p.StreamBeginCapture(stream, hipsys.CaptureModeGlobal); err != nil {
		return err
	}
	if err := p.ModuleLaunchKernel(fn, grid, hipsys.Dim3{X: block, Y: 1, Z: 1}, 0, stream, &args); err != nil {
		return err
	}
	graph, err := p.StreamEndCapture(stream)
	if err != nil {
		return err
	}
	defer p.GraphDestroy(graph)
	exec, err := p.GraphInstantiate(graph)
	if err != nil {
		return err
	}
	defer p.GraphExecDestroy(exec)
	if err := timed(p, stream, start, stop, func() error {
		for i := 0; i < replays; i++ {
			if err := p.GraphLaunch(exec, stream); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	ms, err = p.EventElapsedTime(start, stop)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  graph:   %d replays         %8.3f ms  (%.3f ms each)\n", replays, ms, ms/replays)

	out := make([]byte, bytes)
	if err := p.MemcpyDtoH(out, dy); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		want := float32(1)
		for r := 0; r < 1+replays; r++ {
			want = 2*x[i] + want
		}
		got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
		if got != want {
			return fmt.Errorf("saxpy: y[%d] = %g, want %g", i, got, want)
		}
	}
	fmt.Fprintf(w, "  checked: all %d results match Go\n", n)
	return nil
}
