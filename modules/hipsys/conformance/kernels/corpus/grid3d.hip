// 3-D grids of 3-D blocks: a volume stencil (the 6-neighbour Laplacian) over an
// nx x ny x nz volume, each thread one cell.
#include <hip/hip_runtime.h>

extern "C" __global__ void laplacian3d(const float* u, float* out, int nx, int ny, int nz) {
	const int x = blockIdx.x * blockDim.x + threadIdx.x;
	const int y = blockIdx.y * blockDim.y + threadIdx.y;
	const int z = blockIdx.z * blockDim.z + threadIdx.z;
	if (x >= nx || y >= ny || z >= nz) return;
	const size_t idx = ((size_t)z * ny + y) * nx + x;
	auto at = [&](int xx, int yy, int zz) -> float {
		if (xx < 0 || yy < 0 || zz < 0 || xx >= nx || yy >= ny || zz >= nz) return 0.0f;
		return u[((size_t)zz * ny + yy) * nx + xx];
	};
	out[idx] = at(x - 1, y, z) + at(x + 1, y, z) + at(x, y - 1, z) + at(x, y + 1, z) + at(x, y, z - 1) + at(x, y, z + 1) - 6.0f * u[idx];
}
