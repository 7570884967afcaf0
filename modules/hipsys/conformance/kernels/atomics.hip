// Device-wide atomics: many blocks add into the same few counters.
#include <hip/hip_runtime.h>

// A grid-stride histogram: every thread of every block increments bins shared by all, so
// any lost update shows up as a wrong count.
extern "C" __global__ void histogram(const unsigned int* in, unsigned int* bins, int n, int nbins) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&bins[in[i] % nbins], 1u);
    }
}
