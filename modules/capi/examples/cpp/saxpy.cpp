// saxpy.cpp: y = a*x + y through cubehip.hpp, the header-only C++ wrapper: handles free
// themselves, failures are exceptions.
//
//   c++ -std=c++17 saxpy.cpp $(pkg-config --cflags --libs cubehip) -o saxpy && ./saxpy
#include <cstdio>
#include <vector>

#include <cubehip.hpp>

static const char* source = R"(
#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(unsigned n, float a, const float* x, float* y) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}
)";

int main() {
	try {
		const unsigned n = 1 << 20;
		cubehip::device dev; // the default device
		auto props = dev.properties();
		std::printf("device: %s (%s)\n", props.name, props.platform);

		std::vector<float> x(n), y(n, 1.0f);
		for (unsigned i = 0; i < n; i++) x[i] = float(i);
		auto bx = dev.alloc(n * sizeof(float));
		auto by = dev.alloc(n * sizeof(float));
		bx.write(x);
		by.write(y);

		cubehip::kernel k(dev, source, "saxpy", {256}, {CUBEHIP_ACCESS_READ, CUBEHIP_ACCESS_READ_WRITE});
		k.launch({(n + 255) / 256, 1, 1}, {cubehip::arg(n), cubehip::arg(2.0f), cubehip::arg(bx), cubehip::arg(by)});
		y = by.read<float>();
		for (unsigned i = 0; i < n; i++)
			if (y[i] != 2.0f * float(i) + 1.0f) {
				std::printf("saxpy: y[%u] = %g: WRONG\n", i, y[i]);
				return 1;
			}
		std::printf("saxpy over %u elements: ok\n", n);

		// A compile error is an exception carrying the status; the log is on the kernel.
		cubehip::kernel broken(dev, "extern \"C\" __global__ void f(float* p) { p[0] = nope; }", "f", {1},
			{CUBEHIP_ACCESS_WRITE});
		try {
			broken.compile();
			std::printf("compile error: not reported\n");
			return 1;
		} catch (const cubehip::error& e) {
			bool named = e.status() == CUBEHIP_ERROR_COMPILE && broken.log().find("nope") != std::string::npos;
			std::printf("compile error reported: %s\n", named ? "ok" : "WRONG");
			if (!named) return 1;
		}
		// A released handle is an error, not a crash.
		cubehip_buffer raw = dev.alloc(16).handle(); // the temporary released it already
		if (cubehip_buffer_check(raw) != CUBEHIP_ERROR_INVALID_HANDLE) {
			std::printf("released handle: WRONG\n");
			return 1;
		}
		std::printf("released handle rejected: ok\n");
	} catch (const cubehip::error& e) {
		std::fprintf(stderr, "%s\n", e.what());
		return 1;
	}
	return 0;
}
