// __grid_constant__: a const kernel parameter that is read-only for the whole grid and
// whose address the kernel may take (here a struct of coefficients passed by value,
// read through a pointer to it).
#include <hip/hip_runtime.h>

struct Poly {
	float c[4];
	int n;
};

__device__ float eval(const Poly* p, float x) {
	float r = 0.0f;
	for (int k = p->n - 1; k >= 0; k--) r = r * x + p->c[k];
	return r;
}

extern "C" __global__ void poly_eval(const __grid_constant__ Poly poly, const float* x, float* y, int n) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = eval(&poly, x[i]);
}
