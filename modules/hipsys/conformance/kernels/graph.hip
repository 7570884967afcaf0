// The three steps the graph test captures and replays; unsigned arithmetic wraps, so a
// hundred replays are exact and the host can replay them too.
#include <hip/hip_runtime.h>

extern "C" __global__ void add_one(unsigned int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1u;
}

extern "C" __global__ void mul_two(unsigned int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2u;
}

extern "C" __global__ void sub_three(unsigned int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] -= 3u;
}
