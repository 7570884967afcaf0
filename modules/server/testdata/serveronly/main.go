// Command serveronly is a program that imports package server and nothing else of
// cubehip: server.Open must find a platform with this import alone. The test that
// builds it (TestOpenWithTheServerImportAlone) runs it on the test's platform.
package main

import (
	"fmt"
	"log"

	"github.com/cubehip/cubehip/modules/server"
)

const source = `#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}`

func main() {
	dev, err := server.Open(server.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	saxpy := server.DefineKernel(source, "saxpy",
		server.Block(server.Dim3{X: 64, Y: 1, Z: 1}), server.IO(server.Read, server.ReadWrite))
	x, err := server.UploadSlice(dev.Stream, []float32{1, 2, 3, 4})
	if err != nil {
		log.Fatal(err)
	}
	y, err := server.UploadSlice(dev.Stream, []float32{10, 20, 30, 40})
	if err != nil {
		log.Fatal(err)
	}
	if err := dev.Call(saxpy, server.Dim3{X: 1, Y: 1, Z: 1}, server.I32(4), server.F32(2), x.Arg(), y.Arg()); err != nil {
		log.Fatal(err)
	}
	out, err := server.ReadSlice[float32](dev.Stream, y)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(dev.Platform(), out)
}
