// Plain C++ in device code: helper functions, templates and their instantiations,
// called from extern "C" entry points (the only names a module exports unmangled).
#include <hip/hip_runtime.h>

template <typename T>
__device__ T clamp_value(T v, T lo, T hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

template <typename T, int Power>
struct Pow {
    __device__ static T of(T v) { return v * Pow<T, Power - 1>::of(v); }
};

template <typename T>
struct Pow<T, 0> {
    __device__ static T of(T) { return T(1); }
};

__device__ int triple(int v) { return 3 * v; }

// out_f[i] = clamp(in_f[i]^3, -8, 8); out_i[i] = clamp(triple(i), 0, 100).
extern "C" __global__ void templated(const float* in_f, float* out_f, int* out_i, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out_f[i] = clamp_value<float>(Pow<float, 3>::of(in_f[i]), -8.0f, 8.0f);
        out_i[i] = clamp_value<int>(triple(i), 0, 100);
    }
}
