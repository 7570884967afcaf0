// globals_test.cpp: the module-variable calls through cubehip.hpp, on the device named by
// $CUBEHIP_PLATFORM (the default device otherwise): a __constant__ table written as a
// vector, a __device__ counter read back as one, and the errors as exceptions. Built and
// run by globals_test.go; exits non-zero on the first failed check.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include <cubehip.hpp>

static const char* source = R"(
#include <hip/hip_runtime.h>
__constant__ float scale_table[4];
__device__ unsigned int touched;
extern "C" __global__ void scale(const float* in, float* out, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	out[i] = in[i] * scale_table[i % 4u];
	atomicAdd(&touched, 1u);
}
)";

static int checks;

static void expect(bool ok, const char* what) {
	checks++;
	if (!ok) {
		std::fprintf(stderr, "globals_test.cpp: check failed: %s\n", what);
		std::exit(1);
	}
}

int main() {
	try {
		const char* platform = std::getenv("CUBEHIP_PLATFORM");
		cubehip::device dev(platform ? platform : "auto");
		cubehip::kernel k(dev, source, "scale", {64}, {CUBEHIP_ACCESS_READ, CUBEHIP_ACCESS_WRITE});
		const unsigned n = 1000;
		std::vector<float> in(n);
		for (unsigned i = 0; i < n; i++) in[i] = float(i);
		auto bin = dev.alloc(n * sizeof(float));
		auto bout = dev.alloc(n * sizeof(float));
		bin.write(in);

		expect(k.global_size("scale_table") == 4 * sizeof(float), "the table's size");
		k.write_global("scale_table", std::vector<float>{1, 2, 3, 4});
		k.write_global("touched", std::vector<unsigned>{0});
		k.launch({(n + 63) / 64, 1, 1}, {cubehip::arg(bin), cubehip::arg(bout), cubehip::arg(n)});
		auto out = bout.read<float>();
		bool right = true;
		for (unsigned i = 0; i < n; i++) right = right && out[i] == in[i] * float(i % 4 + 1);
		expect(right, "the kernel read the table written from the host");
		expect(k.read_global<unsigned>("touched") == std::vector<unsigned>{n}, "the counter the kernel kept");
		expect(k.read_global<float>("scale_table") == std::vector<float>{1, 2, 3, 4}, "the table reads back");

		try {
			k.write_global("scale_table", std::vector<float>{1, 2, 3});
			expect(false, "a write of the wrong size is refused");
		} catch (const cubehip::error& e) {
			expect(e.status() == CUBEHIP_ERROR_INVALID_ARGUMENT, "the wrong size is an invalid argument");
			expect(std::string(e.what()).find("scale_table") != std::string::npos, "the error names the variable");
		}
		try {
			k.global_size("no_such_table");
			expect(false, "an unknown name is refused");
		} catch (const cubehip::error& e) {
			expect(std::string(e.what()).find("no_such_table") != std::string::npos, "the error names the unknown variable");
		}
		try {
			k.read_global<double>("touched");
			expect(false, "4 bytes read as doubles are refused");
		} catch (const std::invalid_argument& e) {
			expect(std::string(e.what()).find("touched") != std::string::npos, "the error names the variable");
		}
	} catch (const std::exception& e) {
		std::fprintf(stderr, "globals_test.cpp: unexpected exception: %s\n", e.what());
		return 1;
	}
	std::printf("globals_test.cpp: %d checks passed\n", checks);
	return 0;
}
