package nvidia

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// threeParams has the shape: a kernel of three parameters, launched with one.
const threeParams = `#include <hip/hip_runtime.h>
extern "C" __global__ void scale(const float* in, float* out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = 2.0f * in[i];
}
`

// On the GPU: a launch with fewer arguments than the kernel takes (one pointer for
// scale's three parameters, which made cuLaunchKernel read argument pointers past the
// list and crash the process), with none, or with an argument of the wrong size, is
// hipErrorInvalidValue naming the kernel and the argument, through ModuleLaunchKernel
// and a launch queue alike, and launches nothing; the right arguments still run.
func TestLaunchArgumentsCheckedOnTheDevice(t *testing.T) {
	p := device(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(t, p.SetDevice(0))
	f := fn(t, p, compile(t, p, threeParams), "scale")
	if _, err := p.FuncGetParams(f); err != nil {
		var he *hipsys.Error
		if errors.As(err, &he) && he.Status == hipsys.ErrorNotSupported {
			t.Skipf("this driver predates cuFuncGetParamInfo (CUDA 12.4), so launches are not checked: %v", err)
		}
		require.NoError(t, err)
	}
	const n = 256
	in, err := p.Malloc(n * 4)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(in)) }()
	out, err := p.Malloc(n * 4)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(out)) }()
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i)
	}
	require.NoError(t, p.MemcpyHtoD(in, fromF32(src)))
	require.NoError(t, p.Memset(out, 0, n*4))
	st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.StreamDestroy(st)) }()
	q, err := p.OpenLaunchQueue(0)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()

	grid, block := hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: n, Y: 1, Z: 1}
	cases := []struct {
		name   string
		args   *hipsys.KernelArgs
		detail string
	}{
		{"one pointer for three parameters", new(hipsys.KernelArgs).Ptr(in), "kernel scale takes 3 arguments, got 1"},
		{"nil args", nil, "kernel scale takes 3 arguments, got 0"},
		{"an I64 for the int", new(hipsys.KernelArgs).Ptr(in).Ptr(out).I64(n), "argument 2 of kernel scale is 8 bytes; the parameter takes 4"},
	}
	for _, c := range cases {
		for how, err := range map[string]error{
			"ModuleLaunchKernel": p.ModuleLaunchKernel(f, grid, block, 0, st, c.args),
			"queue": func() error {
				seq, ref, err := q.Launch(f, grid, block, 0, st, c.args, nil)
				assert.Zero(t, seq, "%s: nothing queued", c.name)
				assert.Empty(t, ref)
				return err
			}(),
		} {
			var he *hipsys.Error
			require.ErrorAs(t, err, &he, "%s through %s", c.name, how)
			assert.Equal(t, hipsys.ErrorInvalidValue, he.Status, "%s through %s", c.name, how)
			assert.Equal(t, c.detail, he.Detail, "%s through %s", c.name, how)
		}
	}
	require.Empty(t, q.Settle(nil))
	require.NoError(t, p.StreamSynchronize(st))
	got := make([]byte, n*4)
	require.NoError(t, p.MemcpyDtoH(got, out))
	assert.Equal(t, make([]byte, n*4), got, "no refused launch ran")

	var args hipsys.KernelArgs
	require.NoError(t, p.ModuleLaunchKernel(f, grid, block, 0, st, args.Ptr(in).Ptr(out).I32(n)))
	require.NoError(t, p.StreamSynchronize(st))
	require.NoError(t, p.MemcpyDtoH(got, out))
	assert.Equal(t, float32(2*(n-1)), f32s(got)[n-1])
	_, ref, err := q.Launch(f, grid, block, 0, st, args.Reset().Ptr(out).Ptr(out).I32(n), nil)
	require.NoError(t, err)
	require.Empty(t, ref)
	require.Empty(t, q.Settle(nil))
	require.NoError(t, p.StreamSynchronize(st))
	require.NoError(t, p.MemcpyDtoH(got, out))
	assert.Equal(t, float32(4*(n-1)), f32s(got)[n-1], "the queue's launch ran on the first's output")
}

// On the GPU: with the driver's cuFuncGetParamInfo taken away (a driver older than CUDA
// 12.4), a module's parameters come from its image, CUBIN and PTX as NVRTC writes them
// for this device, and they are the driver's own answer for the same kernels; a launch
// one argument short is refused from them.
func TestImageParamsMatchTheDriverOnTheDevice(t *testing.T) {
	p := device(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(t, p.SetDevice(0))
	props, err := p.GetDeviceProperties(0)
	require.NoError(t, err)
	src := mixedParams + threeParams
	forms := map[string][]string{
		"CUBIN": nil,
		"PTX":   {fmt.Sprintf("--gpu-architecture=compute_%d%d", props.Major, props.Minor)},
	}
	for form, opts := range forms {
		driver := map[string][]uint32{}
		m := compile(t, p, src, opts...)
		for _, name := range []string{"mixed", "scale"} {
			params, err := p.FuncGetParams(fn(t, p, m, name))
			var he *hipsys.Error
			if errors.As(err, &he) && he.Status == hipsys.ErrorNotSupported {
				t.Skipf("this driver predates cuFuncGetParamInfo (CUDA 12.4): nothing to compare the image with: %v", err)
			}
			require.NoError(t, err)
			driver[name] = hipsys.ParamSizes(params)
		}

		func() {
			old := swapParamInfoEntry(nil)
			defer swapParamInfoEntry(old)
			m := compile(t, p, src, opts...)
			for name, want := range driver {
				kf := p.functions.get(uintptr(fn(t, p, m, name)))
				require.NotNil(t, kf)
				assert.True(t, kf.checked, "%s: %s's parameters read from the image", form, name)
				assert.Equal(t, want, kf.sizes, "%s: %s's parameters as the image has them", form, name)
			}
			one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
			err = p.ModuleLaunchKernel(fn(t, p, m, "scale"), one, one, 0, 0, new(hipsys.KernelArgs).Ptr(0))
		}()
		var he *hipsys.Error
		require.ErrorAs(t, err, &he, form)
		assert.Equal(t, "kernel scale takes 3 arguments, got 1", he.Detail, form)
	}
}
