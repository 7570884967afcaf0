// Single-precision math library functions, each compared with Go's math on the host.
#include <hip/hip_runtime.h>

#define MATH_FUNCS 10

// out[i*MATH_FUNCS + k] is function k of in[i] (a positive input, so that every
// function is defined on it).
extern "C" __global__ void math_funcs(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float x = in[i];
    float* o = out + i * MATH_FUNCS;
    o[0] = sqrtf(x);
    o[1] = expf(x);
    o[2] = sinf(x);
    o[3] = cosf(x);
    o[4] = powf(x, 1.5f);
    o[5] = fabsf(-x);
    o[6] = fmaxf(x, 1.0f);
    o[7] = fminf(x, 1.0f);
    o[8] = logf(x);
    o[9] = tanhf(x);
}
