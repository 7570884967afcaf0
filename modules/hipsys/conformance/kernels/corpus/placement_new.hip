// Placement new (<new>): objects constructed in storage the kernel provides, a
// __shared__ buffer and a global one, their constructors run exactly there.
#include <hip/hip_runtime.h>
#include <new>

struct Accumulator {
	float sum;
	int count;
	__device__ Accumulator(float start) : sum(start), count(1) {}
	__device__ void add(float v) {
		sum += v;
		count++;
	}
};

// Each block builds one Accumulator in shared memory; thread 0 adds the block's values.
extern "C" __global__ void block_sums(const float* in, float* sums, int* counts) {
	alignas(Accumulator) __shared__ unsigned char storage[sizeof(Accumulator)];
	if (threadIdx.x == 0) new (storage) Accumulator(100.0f);
	__syncthreads();
	Accumulator* acc = reinterpret_cast<Accumulator*>(storage);
	if (threadIdx.x == 0)
		for (unsigned t = 0; t < blockDim.x; t++) acc->add(in[blockIdx.x * blockDim.x + t]);
	__syncthreads();
	if (threadIdx.x == 0) {
		sums[blockIdx.x] = acc->sum;
		counts[blockIdx.x] = acc->count;
	}
}

// An array of pairs constructed in place in a global buffer (new[] in place).
struct Cell {
	int a, b;
	__device__ Cell() : a(7), b(-7) {}
};
extern "C" __global__ void cells_in_place(int* raw) {
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		Cell* cells = new (raw) Cell[4];
		cells[2].b = 42;
	}
}
