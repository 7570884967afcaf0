// A 2-D grid of 2-D blocks: every built-in's x and y component must be right for each
// element to receive its own row-major index.
#include <hip/hip_runtime.h>

extern "C" __global__ void index2d(unsigned int* out, int width, int height) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < width && row < height) {
        out[row * width + col] = (unsigned int)(row * width + col);
    }
}
