// Compile options reach the compiler: -DVALUE=7 changes what this kernel writes.
#include <hip/hip_runtime.h>

#ifndef VALUE
#define VALUE 1
#endif

extern "C" __global__ void value(int* out) {
    out[0] = VALUE;
}
