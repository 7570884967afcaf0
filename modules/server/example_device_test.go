package server_test

import (
	"errors"
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/server"
)

// saxpySource is HIP C++: the same source compiles for AMD, NVIDIA and the cpu device.
const saxpySource = `#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}`

// saxpy reads x and updates y in place: that access list is what a failure is carried by.
var saxpy = server.NewKernel(saxpySource, "saxpy", server.Dim3{X: 256, Y: 1, Z: 1},
	[]server.Access{server.Read, server.ReadWrite})

func ExampleOpen() {
	// Platform "" is auto: $CUBEHIP_PLATFORM, else amd, nvidia or the cpu device.
	d, err := server.Open(server.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	fmt.Println(d.Props().Name != "")
	// Output: true
}

func ExampleStream_Alloc() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	buf, err := d.Alloc(1 << 20)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(buf.Size())
	fmt.Println(buf.Release())
	// A released buffer is an error, never a crash.
	fmt.Println(errors.Is(buf.Release(), server.ErrReleased))
	// Output:
	// 1048576
	// <nil>
	// true
}

func ExampleStream_Write() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	buf, _ := server.AllocSlice[float32](d.Stream, 4)
	defer buf.Release()
	// From ordinary Go memory, which may be reused as soon as Write returns.
	if err := server.WriteSlice(d.Stream, buf, []float32{1, 2, 3, 4}); err != nil {
		fmt.Println(err)
		return
	}
	data, err := server.ReadSlice[float32](d.Stream, buf)
	fmt.Println(data, err)
	// Bytes at an offset: the third float.
	third := make([]byte, 4)
	fmt.Println(d.ReadAt(third, buf, 8), third)
	// Output:
	// [1 2 3 4] <nil>
	// <nil> [0 0 64 64]
}

func ExampleStream_Launch() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	// Compile reports a broken kernel here, with the compiler's log; Launch would
	// compile on first use otherwise.
	if err := d.Compile(saxpy); err != nil {
		fmt.Println(err)
		return
	}
	x, _ := server.UploadSlice(d.Stream, []float32{1, 2, 3, 4})
	y, _ := server.UploadSlice(d.Stream, []float32{10, 20, 30, 40})
	defer x.Release()
	defer y.Release()
	// CubeCL's order: the buffers, then the scalars, as saxpy(x, y, a, n) declares them.
	err := d.Launch(saxpy, server.Dim3{X: 1, Y: 1, Z: 1}, server.Args{
		Buffers: []*server.Buffer{x, y},
		Scalars: []server.Scalar{server.F32(2), server.U32(4)},
	})
	fmt.Println(err) // enqueued, not finished: Read waits for it
	data, err := server.ReadSlice[float32](d.Stream, y)
	fmt.Println(data, err)
	// Output:
	// <nil>
	// [12 24 36 48] <nil>
}

func ExampleStream_Call() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	// Call takes the arguments in the kernel's order, as plain Go values converted to
	// the types its declaration names; without Block and IO, the block is 256 threads
	// and each buffer's access comes from its declaration (const: only read).
	axpy := server.DefineKernel(`#include <hip/hip_runtime.h>
extern "C" __global__ void axpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}`, "axpy")
	x, _ := server.UploadSlice(d.Stream, []float32{1, 2, 3, 4, 5, 6})
	y, _ := server.UploadSlice(d.Stream, []float32{0, 0, 0, 0, 0, 0})
	defer x.Release()
	defer y.Release()
	one := server.Dim3{X: 1} // 1×1×1: a zero Y or Z is 1
	fmt.Println(d.Call(axpy, one, 6, float32(10), x, y))
	// A view passes a range: y[2:4] += x[0:2].
	fmt.Println(d.Call(axpy, one, 2, 1.0, x, y.View(8, 8)))
	// A value the parameter cannot take is refused, naming it.
	fmt.Println(d.Call(axpy, one, 6, x, x, y))
	fmt.Println(d.Call(axpy, one, -1.5, 1, x, y))
	out, err := server.ReadSlice[float32](d.Stream, y)
	fmt.Println(out, err)
	// Output:
	// <nil>
	// <nil>
	// launch axpy: argument 1 (a): a buffer given, the kernel takes float a (server: invalid argument)
	// launch axpy: argument 0 (n): float64 given, the kernel takes int n: convert it to an integer type first (the conversion says how to round) (server: invalid argument)
	// [10 20 31 42 50 60] <nil>
}

func ExampleDevice_On() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	k := server.NewKernel(`extern "C" __global__ void twice(const float* in, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}`, "twice", server.Dim3{X: 64, Y: 1, Z: 1}, []server.Access{server.Read, server.Write})
	in, _ := server.UploadSlice(d.Stream, []float32{1, 2, 3})
	out, _ := d.On(1).Alloc(12)
	defer in.Release()
	defer out.Release()
	// Stream 1 waits for in's write on stream 0 by itself.
	s1 := d.On(1)
	_ = s1.Launch(k, server.Dim3{X: 1, Y: 1, Z: 1}, server.Args{
		Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.U32(3)},
	})
	data, err := server.ReadSlice[float32](s1, out)
	fmt.Println(data, err)
	// Output: [2 4 6] <nil>
}

func ExampleStream_Capture() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	inc := server.NewKernel(`extern "C" __global__ void inc(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}`, "inc", server.Dim3{X: 64, Y: 1, Z: 1}, []server.Access{server.ReadWrite})
	x, _ := server.UploadSlice(d.Stream, []float32{0, 0})
	defer x.Release()
	args := server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(2)}}
	// run is called twice: a warm-up that runs, then the recording.
	g, err := d.Capture(func(s server.Stream) error {
		for range 3 {
			if err := s.Launch(inc, server.Dim3{X: 1, Y: 1, Z: 1}, args); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		_ = g.Replay() // three launches each, one call
	}
	data, _ := server.ReadSlice[float32](d.Stream, x)
	fmt.Println(data)
	fmt.Println(g.Destroy())
	// Output:
	// [9 9]
	// <nil>
}

func ExampleStream_Profile() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	x, _ := d.Alloc(4 << 20)
	defer x.Release()
	// Device time between the window's two events: the copy, not the host's wait.
	elapsed, err := d.Profile(func() error { return d.Write(x, make([]byte, 4<<20)) })
	fmt.Println(elapsed > 0, err)
	// Output: true <nil>
}

func ExampleStream_Check() {
	p, _ := hipsys.Open("auto")
	f := faults.Wrap(p) // make chosen HIP calls fail
	d, _ := server.OpenPlatform(f, server.Options{})
	defer d.Close()
	_ = d.Compile(saxpy)
	x, _ := server.UploadSlice(d.Stream, []float32{1, 2, 3, 4})
	y, _ := server.UploadSlice(d.Stream, []float32{1, 2, 3, 4})
	defer x.Release()
	defer y.Release()

	f.FailNth("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
	err := d.Launch(saxpy, server.Dim3{X: 1, Y: 1, Z: 1}, server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	fmt.Println("launch:", err) // enqueuing is not where failures are reported...
	// ... the buffers the launch would have written carry it, and only those.
	fmt.Println("y:", errors.Is(d.Check(y), hipsys.ErrorLaunchFailure))
	fmt.Println("x:", d.Check(x))
	// Output:
	// launch: <nil>
	// y: true
	// x: <nil>
}

func ExampleDevice_MemoryUsage() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	bufs := make([]*server.Buffer, 3)
	for i := range bufs {
		bufs[i], _ = d.Alloc(1 << 20)
	}
	u, _ := d.MemoryUsage()
	fmt.Println(u.NumberAllocs, u.BytesInUse)
	for _, b := range bufs {
		_ = b.Release()
	}
	_ = d.Cleanup() // free pages go back to the device
	u, _ = d.MemoryUsage()
	fmt.Println(u.NumberAllocs, u.BytesInUse)
	reports, _ := d.MemoryReport()
	fmt.Println(len(reports), "stream")
	// Output:
	// 3 3145728
	// 0 0
	// 1 stream
}

func ExampleStream_SetAllocationMode() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	// Weights that live for the whole run go to the persistent pool, which never
	// shares a page with short-lived activations.
	_ = d.SetAllocationMode(memory.ModePersistent)
	w, _ := d.Alloc(1 << 20)
	_ = d.SetAllocationMode(memory.ModeAuto)
	defer w.Release()
	rep, _ := d.Stream.MemoryReport()
	fmt.Println(rep.Persistent.Usage.BytesInUse)
	// Output: 1048576
}

func ExampleDevice_InstallPools() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	// One page per allocation, sized from recent requests, instead of sliced pages.
	fmt.Println(d.InstallPools(memory.Layout{Preset: memory.ExclusivePages}))
	b, _ := d.Alloc(4096)
	fmt.Println(b.Size())
	_ = b.Release()
	// Output:
	// <nil>
	// 4096
}
