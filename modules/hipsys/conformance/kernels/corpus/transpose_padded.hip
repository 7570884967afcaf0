// Matrix transpose through a padded shared tile (TILE x TILE+1 avoids bank conflicts),
// with HIP's own index macros.
#include <hip/hip_runtime.h>
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose(const float* in, float* out, int width, int height) {
	__shared__ float tile[TILE][TILE + 1];
	int x = hipBlockIdx_x * TILE + hipThreadIdx_x;
	int y = hipBlockIdx_y * TILE + hipThreadIdx_y;
	for (int j = 0; j < TILE; j += ROWS)
		if (x < width && y + j < height) tile[hipThreadIdx_y + j][hipThreadIdx_x] = in[(y + j) * width + x];
	__syncthreads();
	x = hipBlockIdx_y * TILE + hipThreadIdx_x;
	y = hipBlockIdx_x * TILE + hipThreadIdx_y;
	for (int j = 0; j < TILE; j += ROWS)
		if (x < height && y + j < width) out[(y + j) * height + x] = tile[hipThreadIdx_x][hipThreadIdx_y + j];
}
