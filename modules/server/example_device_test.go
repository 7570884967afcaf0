package server_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

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
var saxpy = server.NewKernel(saxpySource, "saxpy", hipsys.Dim3{X: 256, Y: 1, Z: 1},
	[]server.Access{server.Read, server.ReadWrite})

func f32s(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func fromF32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

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
	buf, _ := d.Alloc(16)
	defer buf.Release()
	// From ordinary Go memory, which may be reused as soon as Write returns.
	if err := d.Write(buf, f32s(1, 2, 3, 4)); err != nil {
		fmt.Println(err)
		return
	}
	data, err := d.Read(buf)
	fmt.Println(fromF32s(data), err)
	// Output: [1 2 3 4] <nil>
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
	x, _ := d.Alloc(16)
	y, _ := d.Alloc(16)
	defer x.Release()
	defer y.Release()
	_ = d.Write(x, f32s(1, 2, 3, 4))
	_ = d.Write(y, f32s(10, 20, 30, 40))
	// The kernel gets the buffers, then the scalars: saxpy(x, y, a, n).
	err := d.Launch(saxpy, hipsys.Dim3{X: 1, Y: 1, Z: 1}, server.Args{
		Buffers: []*server.Buffer{x, y},
		Scalars: []server.Scalar{server.F32(2), server.U32(4)},
	})
	fmt.Println(err) // enqueued, not finished: Read waits for it
	data, err := d.Read(y)
	fmt.Println(fromF32s(data), err)
	// Output:
	// <nil>
	// [12 24 36 48] <nil>
}

func ExampleDevice_On() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	k := server.NewKernel(`extern "C" __global__ void twice(const float* in, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}`, "twice", hipsys.Dim3{X: 64, Y: 1, Z: 1}, []server.Access{server.Read, server.Write})
	in, _ := d.Alloc(12)
	out, _ := d.On(1).Alloc(12)
	defer in.Release()
	defer out.Release()
	_ = d.Write(in, f32s(1, 2, 3))
	// Stream 1 waits for in's write on stream 0 by itself.
	s1 := d.On(1)
	_ = s1.Launch(k, hipsys.Dim3{X: 1, Y: 1, Z: 1}, server.Args{
		Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.U32(3)},
	})
	data, err := s1.Read(out)
	fmt.Println(fromF32s(data), err)
	// Output: [2 4 6] <nil>
}

func ExampleStream_Capture() {
	d, _ := server.Open(server.Options{})
	defer d.Close()
	inc := server.NewKernel(`extern "C" __global__ void inc(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}`, "inc", hipsys.Dim3{X: 64, Y: 1, Z: 1}, []server.Access{server.ReadWrite})
	x, _ := d.Alloc(8)
	defer x.Release()
	_ = d.Write(x, f32s(0, 0))
	args := server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(2)}}
	// run is called twice: a warm-up that runs, then the recording.
	g, err := d.Capture(func(s server.Stream) error {
		for range 3 {
			if err := s.Launch(inc, hipsys.Dim3{X: 1, Y: 1, Z: 1}, args); err != nil {
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
	data, _ := d.Read(x)
	fmt.Println(fromF32s(data))
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
	x, _ := d.Alloc(16)
	y, _ := d.Alloc(16)
	defer x.Release()
	defer y.Release()
	_ = d.Write(x, f32s(1, 2, 3, 4))
	_ = d.Write(y, f32s(1, 2, 3, 4))

	f.FailNth("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
	err := d.Launch(saxpy, hipsys.Dim3{X: 1, Y: 1, Z: 1}, server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
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
