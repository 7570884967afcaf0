// trace_test.cpp: traces through cubehip.hpp, on the device named by $CUBEHIP_PLATFORM
// (the default device otherwise): a trace started and stopped into argv[1], and a
// refused stop as an exception. Built and run by trace_test.go; exits non-zero on the
// first failed check.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <cubehip.hpp>

static const char* source = R"(
#include <hip/hip_runtime.h>
extern "C" __global__ void traced_twice(float* x, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= 2.0f;
}
)";

static int checks;

static void expect(bool ok, const char* what) {
	checks++;
	if (!ok) {
		std::fprintf(stderr, "trace_test.cpp: check failed: %s\n", what);
		std::exit(1);
	}
}

int main(int argc, char** argv) {
	expect(argc == 2, "usage: trace_test DIR");
	const std::string path = std::string(argv[1]) + "/trace.json";
	try {
		const char* platform = std::getenv("CUBEHIP_PLATFORM");
		cubehip::device dev(platform ? platform : "auto");
		dev.flush_trace(); // no CUBEHIP_TRACE: nothing to do, and no error
		dev.start_trace();
		cubehip::kernel k(dev, source, "traced_twice", {64}, {CUBEHIP_ACCESS_READ_WRITE});
		std::vector<float> x(10, 1.0f);
		auto b = dev.alloc(x.size() * sizeof(float));
		b.write(x);
		k.launch({1, 1, 1}, {cubehip::arg(b), cubehip::arg(static_cast<std::uint32_t>(x.size()))});
		x = b.read<float>();
		expect(x[9] == 2.0f, "the launch ran");
		try {
			dev.stop_trace(std::string(argv[1]) + "/no-such-dir/trace.json");
			expect(false, "a stop into a missing directory throws");
		} catch (const cubehip::error& e) {
			expect(e.status() == CUBEHIP_ERROR_INVALID_ARGUMENT, "a missing directory is an invalid argument");
		}
		dev.stop_trace(path); // the trace stayed open
		std::ifstream in(path);
		std::stringstream text;
		text << in.rdbuf();
		expect(text.str().find("\"name\":\"traced_twice\",\"cat\":\"launch\"") != std::string::npos, "the launch is traced");
		expect(text.str().find("\"name\":\"traced_twice\",\"cat\":\"compile\"") != std::string::npos, "the compile is traced");
	} catch (const cubehip::error& e) {
		std::fprintf(stderr, "trace_test.cpp: %s\n", e.what());
		return 1;
	}
	std::printf("trace_test.cpp: %d checks passed\n", checks);
	return 0;
}
