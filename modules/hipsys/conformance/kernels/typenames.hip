// The short unsigned type names AMD's HIP headers give device code (uchar, ushort, uint,
// ulong, ullong): a kernel written for AMD that uses them compiles and runs on every
// platform.
#include <hip/hip_runtime.h>

// Each name's width shows in the result: uchar and ushort wrap where 8 and 16 bits do,
// ulong and ullong hold values past 32 bits.
extern "C" __global__ void short_names(uint* out, uint n) {
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    uchar c = (uchar)(i + 255);
    ushort s = (ushort)(i + 65535);
    ulong l = (ulong)i << 40;
    ullong ll = (ullong)i << 50;
    if (i < n) {
        out[i] = i * 3u + (uint)c + (uint)s + (uint)(l >> 40) + (uint)(ll >> 50);
    }
}
