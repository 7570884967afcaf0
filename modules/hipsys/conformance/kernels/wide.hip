// 64-bit arithmetic in kernels: scalars and indices beyond 2^32, which a platform that
// passed or computed them in 32 bits would truncate.
#include <hip/hip_runtime.h>

// Splits a 64-bit by-value scalar into its halves.
extern "C" __global__ void split64(unsigned long long x, unsigned int* out) {
    out[0] = (unsigned int)(x >> 32);
    out[1] = (unsigned int)(x & 0xffffffffull);
}

// Each thread forms a 64-bit index biased past 2^32, stores it, and subtracts the bias
// back to find its slot: out[i] = bias + i, where a 32-bit index would lose the bias.
extern "C" __global__ void index64(unsigned long long* out, size_t bias, int n) {
    size_t big = bias + (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t i = big - bias;
    if (i < (size_t)n) {
        out[i] = big;
    }
}
