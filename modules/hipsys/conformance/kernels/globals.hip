// Module variables the host reads and writes by name (hipModuleGetGlobal): a table in
// constant memory the kernel reads, and a counter in global memory it adds to.
#include <hip/hip_runtime.h>

__constant__ int scale_table[4] = {1, 2, 3, 4};
__device__ unsigned long long scaled_total;

extern "C" __global__ void scale_by_table(int* data, int n) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const int v = data[i] * scale_table[i % 4];
	data[i] = v;
	atomicAdd(&scaled_total, (unsigned long long)v);
}
