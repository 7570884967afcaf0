// saxpy.cpp: y = a*x + y through cubehip.hpp, the header-only C++ wrapper: handles free
// themselves, failures are exceptions.
//
//   c++ -std=c++17 saxpy.cpp $(pkg-config --cflags --libs cubehip) -o saxpy && ./saxpy
#include <cstdio>
#include <string>
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
		// Typed buffers: a launch checks them against the pointers the kernel declares.
		auto bx = dev.alloc_typed(CUBEHIP_DTYPE_F32, n);
		auto by = dev.alloc_typed(CUBEHIP_DTYPE_F32, n);
		bx.write(x);
		by.write(y);

		// No access list: x is read (const float*), y read and written, from the declaration.
		cubehip::kernel k(dev, source, "saxpy");
		k.launch({(n + 255) / 256, 1, 1}, {cubehip::arg(n), cubehip::arg(2.0f), cubehip::arg(bx), cubehip::arg(by)});
		y = by.read<float>();
		for (unsigned i = 0; i < n; i++)
			if (y[i] != 2.0f * float(i) + 1.0f) {
				std::printf("saxpy: y[%u] = %g: WRONG\n", i, y[i]);
				return 1;
			}
		std::printf("saxpy over %u elements: ok\n", n);

		// A buffer of doubles for const float* x is refused at the call, naming x.
		auto doubles = dev.alloc_typed(CUBEHIP_DTYPE_F64, n);
		try {
			k.launch({(n + 255) / 256, 1, 1}, {cubehip::arg(n), cubehip::arg(2.0f), cubehip::arg(doubles), cubehip::arg(by)});
			std::printf("wrong element type: not refused\n");
			return 1;
		} catch (const cubehip::error& e) {
			bool named = e.status() == CUBEHIP_ERROR_INVALID_ARGUMENT && std::string(e.what()).find("const float* x") != std::string::npos;
			std::printf("wrong element type refused: %s\n", named ? "ok" : "WRONG");
			if (!named) return 1;
		}

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
