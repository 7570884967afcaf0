// Element-wise kernels: a buffer-only entry and one with by-value scalars of two types.
#include <hip/hip_runtime.h>

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

// y = alpha*x + y: a float scalar ahead of the pointers and an int after them, so the
// parameter block has both 4- and 8-byte members at their natural alignment.
extern "C" __global__ void saxpy(float alpha, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i] + y[i];
    }
}
