// Tiled single-precision matrix multiply, C = A * B (row-major, M x K times K x N), the
// classic shared-memory blocking: each block stages one TILE x TILE tile of A and of B
// at a time, and every thread accumulates one element of C.
#include <hip/hip_runtime.h>
#define TILE 16

extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
	__shared__ float As[TILE][TILE];
	__shared__ float Bs[TILE][TILE];
	const int row = blockIdx.y * TILE + threadIdx.y;
	const int col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;
	for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
		const int ka = t * TILE + threadIdx.x, kb = t * TILE + threadIdx.y;
		As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
		Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
		__syncthreads();
#pragma unroll
		for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	if (row < M && col < N) C[row * N + col] = acc;
}
