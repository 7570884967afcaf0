package jit_test

// The test kernels, grouped by module so each source compiles once per test run.

// basicSource runs as a plain loop (no barrier anywhere in it).
const basicSource = `
#include <hip/hip_runtime.h>

template <typename T> __device__ T twice(T v) { return v + v; }
__device__ __forceinline__ float square(float x) { return x * x; }

extern "C" __global__ void vadd(const float* a, const float* b, float* c, unsigned long long n) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void __launch_bounds__(256) saxpy(float a, const float* x, float* y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}

__launch_bounds__(64, 1) extern "C" __global__ void grid2d(unsigned* out, int width, int height) {
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < width && y < height) out[y * width + x] = (blockIdx.y << 24) | (blockIdx.x << 16) | (threadIdx.y << 8) | threadIdx.x;
}

// Every thread of a 3-D grid of 3-D blocks writes its coordinates at its linear index.
extern "C" __global__ void grid3d(unsigned* out) {
	unsigned b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
	unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
	out[b * blockDim.x * blockDim.y * blockDim.z + t] =
		blockIdx.z << 24 | blockIdx.y << 16 | blockIdx.x << 8 | threadIdx.z << 4 | threadIdx.y << 2 | threadIdx.x;
}

extern "C" {
__global__ void histogram(const unsigned char* in, unsigned* bins, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) atomicAdd(&bins[in[i]], 1u);
}

__global__ void helpers(float* f, int* i, double* d, int n) {
	int k = blockIdx.x * blockDim.x + threadIdx.x;
	if (k >= n) return;
	f[k] = square(twice(float(k)));
	i[k] = twice(k) + min(k, 3) + max(k, 2u);
	d[k] = twice(0.25 * k);
}
}

extern "C" __global__ void empty() {}

// Each thread gets its own copy of the by-value parameters, and return ends one thread.
extern "C" __global__ void private_params(int* out, int base, int n) {
	int t = threadIdx.x;
	base += t; // on a GPU every thread modifies its own copy
	if (t >= n) return;
	out[t] = base;
}

// The last three blocks of a grid over 2^31 threads in x: the int index runs up to
// INT_MAX, wraps inside the next block and is negative in the last, as on a GPU. The other
// blocks return at once, so the launch stays cheap.
extern "C" __global__ void wrap_index(int* out, unsigned* tid) {
	if (blockIdx.x + 3 < gridDim.x) return;
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned k = (blockIdx.x + 3 - gridDim.x) * blockDim.x + threadIdx.x;
	out[k] = i;
	tid[k] = threadIdx.x;
}

// One thread per (function, input) pair: out[f*n + k] = f(in[k]).
extern "C" __global__ void mathf(const float* in, float* out, int n) {
	int k = blockIdx.x * blockDim.x + threadIdx.x;
	if (k >= n) return;
	float x = in[k];
	float* o = out + k;
	o[0 * n] = sqrtf(x);
	o[1 * n] = expf(x);
	o[2 * n] = logf(x);
	o[3 * n] = sinf(x);
	o[4 * n] = cosf(x);
	o[5 * n] = powf(x, 1.5f);
	o[6 * n] = fabsf(-x);
	o[7 * n] = fminf(x, 1.0f);
	o[8 * n] = fmaxf(x, 1.0f);
	o[9 * n] = rsqrtf(x);
	o[10 * n] = __expf(x);
	o[11 * n] = __fdividef(x, 3.0f);
	o[12 * n] = floorf(x * 3.3f);
	o[13 * n] = ceilf(x * 3.3f);
	o[14 * n] = tanhf(x);
	o[15 * n] = fmaf(x, 2.0f, 1.0f);
}

extern "C" __global__ void mathd(const double* in, double* out, int n) {
	int k = blockIdx.x * blockDim.x + threadIdx.x;
	if (k >= n) return;
	double x = in[k];
	double* o = out + k;
	o[0 * n] = sqrt(x);
	o[1 * n] = exp(x);
	o[2 * n] = log(x);
	o[3 * n] = sin(x);
	o[4 * n] = cos(x);
	o[5 * n] = pow(x, 1.5);
	o[6 * n] = fabs(-x);
	o[7 * n] = fmin(x, 1.0);
	o[8 * n] = fmax(x, 1.0);
	o[9 * n] = rsqrt(x);
	o[10 * n] = exp(x);
	o[11 * n] = x / 3.0;
	o[12 * n] = floor(x * 3.3);
	o[13 * n] = ceil(x * 3.3);
	o[14 * n] = tanh(x);
	o[15 * n] = fma(x, 2.0, 1.0);
}

// Every thread of every block hits the same few words: the results are exact only if
// the operations are atomic across the pool's OS threads.
extern "C" __global__ void atomics(int* si, unsigned* ui, unsigned long long* ul, float* f, double* d) {
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	atomicAdd(&si[0], 2);
	atomicSub(&si[1], 1);
	atomicMax(&si[2], t);
	atomicMin(&si[3], -t);
	atomicOr(&si[4], 1 << (t % 31));
	atomicXor(&si[5], 1);
	atomicAnd(&si[6], ~(1 << (t % 31)));
	atomicAdd(&ui[0], 1u);
	atomicMax(&ui[1], (unsigned)t);
	atomicMin(&ui[2], (unsigned)t);
	atomicInc(&ui[3], 9u);
	atomicExch(&ui[4], 7u);
	unsigned old = ui[5];
	while (true) { unsigned prev = atomicCAS(&ui[5], old, old + 1); if (prev == old) break; old = prev; }
	atomicAdd(&ul[0], 3ull);
	atomicMax(&ul[1], (unsigned long long)t);
	atomicAdd(&f[0], 0.5f);
	atomicMax(&f[1], (float)t);
	atomicAdd(&d[0], 0.25);
	atomicMin(&d[1], -(double)t);
}
`

// deviceIndexSource reads the index variables in a __device__ function, outside any
// entry body: the runner must keep the thread-local copies current.
const deviceIndexSource = `
__device__ unsigned global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }
#define GLOBAL_Y (blockIdx.y * blockDim.y + threadIdx.y)
__device__ unsigned row() { return GLOBAL_Y; }

extern "C" __global__ void ids(unsigned* out, unsigned* rows) {
	unsigned i = global_id();
	out[i] = i;
	rows[i] = row() + gridDim.x * 1000;
}
extern "C" __global__ void ids_barrier(unsigned* out) {
	__shared__ unsigned s[64];
	s[threadIdx.x] = global_id();
	__syncthreads();
	out[global_id()] = s[blockDim.x - 1 - threadIdx.x];
}
`

// barrierSource calls __syncthreads, so every kernel in it runs as fibers.
const barrierSource = `
#define BLOCK 256
extern __shared__ float file_scope_dyn[];

extern "C" __global__ void reduce(const float* in, float* out, int n) {
	__shared__ float s[BLOCK];
	int t = threadIdx.x;
	int i = blockIdx.x * blockDim.x + t;
	s[t] = i < n ? in[i] : 0.0f;
	__syncthreads();
	for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
		if (t < stride) s[t] += s[t + stride];
		__syncthreads();
	}
	if (t == 0) out[blockIdx.x] = s[0];
}

// Reverses each block's slice through dynamic shared memory.
extern "C" __global__ void reverse(const int* in, int* out) {
	extern __shared__ __align__(16) int dyn[];
	int t = threadIdx.x, base = blockIdx.x * blockDim.x;
	dyn[t] = in[base + t];
	__syncthreads();
	out[base + t] = dyn[blockDim.x - 1 - t];
}

// The same through a namespace-scope extern __shared__ array, 2-D blocks.
extern "C" __global__ void transpose_tile(const float* in, float* out, int w) {
	int tx = threadIdx.x, ty = threadIdx.y, d = blockDim.x;
	int x = blockIdx.x * d + tx, y = blockIdx.y * d + ty;
	file_scope_dyn[ty * d + tx] = in[y * w + x];
	__syncthreads();
	int ox = blockIdx.y * d + tx, oy = blockIdx.x * d + ty;
	out[oy * w + ox] = file_scope_dyn[tx * d + ty];
}
`
