// Kernels that only name expressions reach (hiprtcAddNameExpression): a template, whose
// instances a name expression makes, and one instantiated explicitly; a C++-linkage
// kernel in a namespace; two overloads of one name; a template with barriers and dynamic
// shared memory. And an extern "C" kernel, which an expression names by its own name.
#include <hip/hip_runtime.h>

// out[i] = in[i] * Scale.
template <typename T, int Scale>
__global__ void scaled(const T* in, T* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * T(Scale);
}
template __global__ void scaled<int, 3>(const int*, int*, int);

namespace ops {
// p[i] = -p[i].
__global__ void negate(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = -p[i];
}
}  // namespace ops

// out[i] = v + i, as int or as float.
__global__ void fill(int* out, int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v + i;
}
__global__ void fill(float* out, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v + float(i);
}

// A block's sum of in, with barriers and dynamic shared memory: out[blockIdx.x].
template <typename T>
__global__ void block_sum(const T* in, T* out) {
    extern __shared__ unsigned char raw[];
    T* s = reinterpret_cast<T*>(raw);
    s[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// p[i] += d.
extern "C" __global__ void offset(int* p, int d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += d;
}
