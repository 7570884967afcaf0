// funcattr_test.cpp: a kernel's function attributes through cubehip.hpp, on the device
// named by $CUBEHIP_PLATFORM (the default device otherwise): attribute() reads them,
// set_max_dynamic_shared_size_bytes lowers the limit (a launch over it thrown as
// CUBEHIP_ERROR_INVALID_ARGUMENT) and raises it (the launch runs), and a value over the
// device's is thrown as CUBEHIP_HIP_ERROR_INVALID_VALUE. Built and run by funcattr_test.go;
// exits non-zero on the first failed check.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cubehip.hpp>

static const char* source = R"(
#include <hip/hip_runtime.h>
extern "C" __global__ void fill_shared(unsigned* out, unsigned words) {
	extern __shared__ unsigned w[];
	for (unsigned i = threadIdx.x; i < words; i += blockDim.x) w[i] = i;
	__syncthreads();
	if (threadIdx.x == 0) out[0] = w[words - 1];
}
)";

static int checks;

static void expect(bool ok, const char* what) {
	checks++;
	if (!ok) {
		std::fprintf(stderr, "funcattr_test.cpp: check failed: %s\n", what);
		std::exit(1);
	}
}

int main() {
	try {
		const char* platform = std::getenv("CUBEHIP_PLATFORM");
		cubehip::device dev(platform ? platform : "auto");
		const unsigned shared = 8192, words = shared / 4;
		cubehip::kernel k(dev, source, "fill_shared", {32}, {CUBEHIP_ACCESS_WRITE}, shared);
		expect(k.attribute(CUBEHIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) > 0, "max threads per block");
		auto out = dev.alloc(sizeof(unsigned));

		k.set_max_dynamic_shared_size_bytes(1024);
		expect(k.attribute(CUBEHIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 1024, "the limit reads back");
		try {
			k.launch({1, 1, 1}, {cubehip::arg(out), cubehip::arg(words)});
			expect(false, "a launch over the kernel's limit is refused");
		} catch (const cubehip::error& e) {
			expect(e.status() == CUBEHIP_ERROR_INVALID_ARGUMENT, "refused as an invalid argument");
		}
		k.set_attribute(CUBEHIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(shared));
		k.launch({1, 1, 1}, {cubehip::arg(out), cubehip::arg(words)});
		expect(out.read<unsigned>() == std::vector<unsigned>{words - 1}, "the raised launch ran");
		try {
			k.set_max_dynamic_shared_size_bytes(1 << 30);
			expect(false, "a limit over the device's is refused");
		} catch (const cubehip::error& e) {
			expect(e.status() == CUBEHIP_HIP_ERROR_INVALID_VALUE, "refused as an invalid value");
		}
	} catch (const std::exception& e) {
		std::fprintf(stderr, "funcattr_test.cpp: %s\n", e.what());
		return 1;
	}
	std::printf("%d checks passed\n", checks);
	return 0;
}
