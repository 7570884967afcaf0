// Half precision: a half2 axpy with the packed intrinsics, and a half dot product
// accumulated in float, as mixed-precision code does.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

extern "C" __global__ void haxpy(int n, __half a, const __half2* x, __half2* y) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = __hfma2(__half2half2(a), x[i], y[i]);
}

extern "C" __global__ void hdot(int n, const __half* x, const __half* y, float* out) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) atomicAdd(out, __half2float(x[i]) * __half2float(y[i]));
}

extern "C" __global__ void to_half(int n, const float* in, __half* out) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = __float2half(in[i]);
}
