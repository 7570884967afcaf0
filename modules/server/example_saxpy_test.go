package server_test

import (
	"fmt"
	"log"

	"github.com/cubehip/cubehip/modules/server"
)

// A complete first program: y = 2x + y on the default device, every error checked. The
// kernel's declaration says the rest: the block is the default 256 threads, x (const)
// is only read and y read and written, and n and 2 become the int and the float the
// kernel takes.
func Example() {
	const source = `#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}`
	dev, err := server.Open(server.Options{}) // amd, else nvidia, else the cpu device
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	saxpy := server.DefineKernel(source, "saxpy")
	xs, ys := []float32{1, 2, 3, 4}, []float32{10, 20, 30, 40}
	x, err := server.UploadSlice(dev.Stream, xs)
	if err != nil {
		log.Fatal(err)
	}
	y, err := server.UploadSlice(dev.Stream, ys)
	if err != nil {
		log.Fatal(err)
	}
	n := len(xs)
	if err := dev.Call(saxpy, server.Dim3{X: uint32(n+255) / 256}, n, 2, x, y); err != nil {
		log.Fatal(err)
	}
	if err := server.ReadSliceInto(dev.Stream, ys, y); err != nil {
		log.Fatal(err)
	}
	fmt.Println(ys)
	// Output: [12 24 36 48]
}
