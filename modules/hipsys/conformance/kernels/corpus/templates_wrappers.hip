// Templates behind extern "C" wrappers: the kernels are written once as templates (with a
// functor and a trait), and each instantiation a host program loads by name is an
// extern "C" entry.
#include <hip/hip_runtime.h>
#include <type_traits>

template <typename T> struct Axpy {
	T a;
	__device__ T operator()(T x, T y) const { return a * x + y; }
};

template <typename T, typename Op> __device__ void apply(const T* x, T* y, int n, Op op) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = op(x[i], y[i]);
}

template <typename T> __device__ T clamp_value(T v, T lo, T hi) {
	static_assert(std::is_arithmetic<T>::value, "numbers only");
	return v < lo ? lo : (v > hi ? hi : v);
}

extern "C" __global__ void axpy_f32(float a, const float* x, float* y, int n) { apply(x, y, n, Axpy<float>{a}); }
extern "C" __global__ void axpy_f64(double a, const double* x, double* y, int n) { apply(x, y, n, Axpy<double>{a}); }
extern "C" __global__ void clamp_i32(int* v, int lo, int hi, int n) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) v[i] = clamp_value(v[i], lo, hi);
}
