// Double-precision math as scientific kernels use it: each thread evaluates a set of
// functions of its input.
#include <hip/hip_runtime.h>

extern "C" __global__ void dmath(const double* x, double* out, int n) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const double v = x[i];
	double s, c;
	sincospi(v, &s, &c);
	double* o = out + 8 * i;
	o[0] = s + 2.0 * c;
	o[1] = rhypot(v, 1.5);
	o[2] = norm3d(v, 2.0, -1.0);
	o[3] = rnorm3d(v, 2.0, -1.0);
	o[4] = erfinv(v / 2.0);
	o[5] = cbrt(v) + rsqrt(v + 1.0);
	o[6] = exp(-v) * log1p(v) + pow(v, 1.5);
	o[7] = (double)__brevll((unsigned long long)(i + 1));
}
