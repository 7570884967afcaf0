// A kernel that stays busy for a chosen time, so that stream and event state can be
// observed while work is still pending.
#include <hip/hip_runtime.h>

// Iterates a linear congruential generator iters times on one thread, then publishes
// value and the generator's final state. Each step depends on the previous one, so the
// compiler can neither vectorize nor drop the loop (its result is stored), and it costs
// a few cycles per step on any device, unlike a volatile counter in GPU scratch memory.
extern "C" __global__ void spin(unsigned int* out, unsigned long long iters, unsigned int value) {
    if (blockIdx.x != 0 || threadIdx.x != 0) {
        return;
    }
    unsigned int x = value;
    for (unsigned long long i = 0; i < iters; ++i) {
        x = x * 1664525u + 1013904223u;
    }
    out[1] = x;
    out[0] = value;
}
