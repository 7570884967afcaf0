// cooperative_test.cpp: a cooperative kernel through cubehip.hpp, on the device named by
// $CUBEHIP_PLATFORM (the default device otherwise): the flags argument, the occupancy
// query, a grid of as many blocks as the device holds at once, and one block more thrown
// as CUBEHIP_HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE. Built and run by cooperative_test.go;
// exits non-zero on the first failed check.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cubehip.hpp>

static const char* source = R"(
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void count_blocks(unsigned* slots, unsigned* out) {
	if (threadIdx.x == 0) slots[blockIdx.x] = 1;
	cg::this_grid().sync();
	if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
		unsigned t = 0;
		for (unsigned b = 0; b < gridDim.x; b++) t += slots[b];
		out[0] = t;
	}
}
)";

static int checks;

static void expect(bool ok, const char* what) {
	checks++;
	if (!ok) {
		std::fprintf(stderr, "cooperative_test.cpp: check failed: %s\n", what);
		std::exit(1);
	}
}

int main() {
	try {
		const char* platform = std::getenv("CUBEHIP_PLATFORM");
		cubehip::device dev(platform ? platform : "auto");
		cubehip::kernel k(dev, source, "count_blocks", {32}, {CUBEHIP_ACCESS_WRITE, CUBEHIP_ACCESS_WRITE}, 0, {},
			CUBEHIP_KERNEL_COOPERATIVE);
		const int per = k.max_active_blocks(32);
		expect(per > 0, "blocks of 32 threads fit a multiprocessor");
		const unsigned blocks = unsigned(per) * unsigned(dev.properties().multiprocessor_count);
		auto slots = dev.alloc((blocks + 1) * sizeof(unsigned));
		auto out = dev.alloc(sizeof(unsigned));
		try {
			k.launch({blocks, 1, 1}, {cubehip::arg(slots), cubehip::arg(out)});
		} catch (const cubehip::error& e) {
			if (e.status() == CUBEHIP_HIP_ERROR_NOT_SUPPORTED) {
				std::printf("no cooperative launch here: %s; %d checks passed\n", e.what(), checks);
				return 0;
			}
			throw;
		}
		expect(out.read<unsigned>() == std::vector<unsigned>{blocks}, "every block wrote its slot before the last summed them");
		try {
			k.launch({blocks + 1, 1, 1}, {cubehip::arg(slots), cubehip::arg(out)});
			expect(false, "one block more than the device holds at once is refused");
		} catch (const cubehip::error& e) {
			expect(e.status() == CUBEHIP_HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "refused as too large");
		}
	} catch (const std::exception& e) {
		std::fprintf(stderr, "cooperative_test.cpp: %s\n", e.what());
		return 1;
	}
	std::printf("%d checks passed\n", checks);
	return 0;
}
