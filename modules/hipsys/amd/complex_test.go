package amd_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/amd"
)

// <hip/hip_complex.h> compiles with hiprtc on every supported ROCm, every function of HIP's
// complex API in it: before 6.1 the installed header would define the preamble's vector
// types again, so cubehip gives its own. The source is as Python's translate_cucomplex
// writes it (the header, then #line 1).
func TestHipComplexHeaderCompiles(t *testing.T) {
	supported(t)
	const src = "#include <hip/hip_complex.h>\n#line 1\n" + `
extern "C" __global__ void cplx(hipFloatComplex* z, hipDoubleComplex* w, float* f, double* d) {
  hipComplex a = make_hipComplex(1.0f, 2.0f);
  hipFloatComplex b = make_hipFloatComplex(hipCrealf(z[0]), hipCimagf(z[0]));
  z[0] = hipCfmaf(hipCdivf(hipCmulf(a, b), hipCaddf(a, b)), hipConjf(hipCsubf(a, b)), b);
  f[0] = hipCabsf(z[0]) + hipCsqabsf(z[0]);
  hipDoubleComplex c = hipComplexFloatToDouble(z[0]);
  hipDoubleComplex e = make_hipDoubleComplex(hipCreal(w[0]), hipCimag(w[0]));
  w[0] = hipCfma(hipCdiv(hipCmul(c, e), hipCadd(c, e)), hipConj(hipCsub(c, e)), e);
  d[0] = hipCabs(w[0]) + hipCsqabs(w[0]);
  z[1] = hipComplexDoubleToFloat(w[0]);
}`
	code, log, err := amd.CompileFor("gfx90a", src, "cplx.hip", nil)
	require.NoError(t, err, "log:\n%s", log)
	assert.NoError(t, amd.CheckCodeObject(code, "gfx90a", "cplx"))
}
