// Block-level cooperation: a static shared-memory tree reduction with barriers, and a
// dynamic shared-memory buffer sized at launch.
#include <hip/hip_runtime.h>

#define BLOCK 256

// Each 256-thread block sums its slice of in into block_sums[blockIdx.x]. Every step
// reads what other threads wrote before the barrier, so a missing or misplaced
// __syncthreads gives wrong sums, not just slow ones.
extern "C" __global__ void block_sum(const float* in, float* block_sums, int n) {
    __shared__ float partial[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    partial[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            partial[tid] += partial[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        block_sums[blockIdx.x] = partial[0];
    }
}

// Reverses each block's slice through dynamic shared memory: thread t reads what thread
// blockDim.x-1-t stored, so the buffer must be shared by the block and as big as the
// launch said.
extern "C" __global__ void block_reverse(const float* in, float* out) {
    extern __shared__ float buf[];
    int tid = threadIdx.x;
    int base = blockIdx.x * blockDim.x;
    buf[tid] = in[base + tid];
    __syncthreads();
    out[base + tid] = buf[blockDim.x - 1 - tid];
}
