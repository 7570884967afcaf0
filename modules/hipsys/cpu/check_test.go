package cpu

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

const checkSource = `
extern "C" __global__ void bump(float* a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) a[i] += 1.0f;
}
`

// checkedKernel compiles checkSource on p with its checks on.
func checkedKernel(t *testing.T, p *Platform, c hipsys.Checks) hipsys.Function {
	t.Helper()
	prog, err := p.RTCCreateProgram(checkSource, "bump.hip", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.RTCDestroyProgram(prog)) }()
	require.NoError(t, p.RTCCompileProgram(prog, []string{hipsys.CheckOption(c)}))
	image, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	mod, err := p.ModuleLoadData(image)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.ModuleUnload(mod) })
	f, err := p.ModuleGetFunction(mod, "bump")
	require.NoError(t, err)
	return f
}

func launchReports(t *testing.T, p *Platform, f hipsys.Function, d hipsys.DevicePtr, n uint32) *hipsys.CheckReports {
	t.Helper()
	var args hipsys.KernelArgs
	args.Ptr(d).U32(n)
	require.NoError(t, p.ModuleLaunchKernel(f, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, 0, &args))
	err := p.StreamSynchronize(0)
	if err == nil {
		return nil
	}
	var reps *hipsys.CheckReports
	require.True(t, errors.As(err, &reps), "%v", err)
	return reps
}

// One float past a buffer, which a neighbour would otherwise own, and an access through a
// released buffer are reported, each naming the parameter; the fixed launch is clean.
func TestCheckedDeviceMemory(t *testing.T) {
	p := newTest(t)
	release, err := p.CheckKernels(hipsys.CheckMemory)
	require.NoError(t, err)
	defer release()
	f := checkedKernel(t, p, hipsys.CheckMemory)
	a, err := p.Malloc(4 * 16)
	require.NoError(t, err)
	b, err := p.Malloc(4 * 16)
	require.NoError(t, err)
	require.NoError(t, p.Memset(a, 0, 64))
	require.NoError(t, p.Memset(b, 0, 64))

	require.Nil(t, launchReports(t, p, f, a, 15), "i <= 15 stays inside 16 floats")
	reps := launchReports(t, p, f, a, 16)
	require.NotNil(t, reps)
	// a[16] += 1: its read, and its write where GCC checks the address again.
	require.True(t, reps.Total >= 1 && reps.Total <= 2, "%v", reps.Reports)
	r := reps.Reports[0]
	require.Equal(t, "out of bounds", r.What)
	require.Equal(t, "a", r.Param)
	require.Equal(t, int64(64), r.Offset)
	require.Equal(t, uint64(64), r.BufferSize)
	require.Equal(t, hipsys.Dim3{X: 16}, r.Thread)
	require.Equal(t, 4, r.Line)

	require.NoError(t, p.Free(b))
	reps = launchReports(t, p, f, b, 4)
	require.NotNil(t, reps)
	require.Equal(t, "use after release", reps.Reports[0].What, "%v", reps)
	require.Equal(t, "a", reps.Reports[0].Param) // the kernel's parameter, pointing into released memory
	require.NoError(t, p.Free(a))
}

func TestChecksFromEnv(t *testing.T) {
	t.Setenv(envChecks, "memcheck,synccheck")
	p, err := newPlatform()
	require.NoError(t, err)
	require.Equal(t, hipsys.CheckMemory|hipsys.CheckSync, p.kernelChecks())
	require.Equal(t, []string{"-O2", "--cubehip-check=memcheck,synccheck"}, p.checkedOptions([]string{"-O2"}))
	t.Setenv(envChecks, "memcheck,leakcheck")
	_, err = newPlatform()
	require.ErrorContains(t, err, `unknown kernel check "leakcheck"`)
}

// initcheck: a buffer nothing wrote is reported at its first read; one a fill, a copy or
// a kernel wrote is not.
func TestCheckedUninitializedReads(t *testing.T) {
	p := newTest(t)
	release, err := p.CheckKernels(hipsys.CheckMemory | hipsys.CheckInit)
	require.NoError(t, err)
	defer release()
	f := checkedKernel(t, p, hipsys.CheckMemory|hipsys.CheckInit)
	a, err := p.Malloc(4 * 16)
	require.NoError(t, err)
	b, err := p.Malloc(4 * 16)
	require.NoError(t, err)
	c, err := p.Malloc(4 * 16)
	require.NoError(t, err)
	defer func() {
		for _, d := range []hipsys.DevicePtr{a, b, c} {
			require.NoError(t, p.Free(d))
		}
	}()
	require.NoError(t, p.Memset(a, 0, 64))
	require.NoError(t, p.MemcpyHtoD(c, make([]byte, 32))) // the first 8 floats only

	require.Nil(t, launchReports(t, p, f, a, 15), "a filled buffer reads clean")
	reps := launchReports(t, p, f, b, 3)
	require.NotNil(t, reps)
	r := reps.Reports[0]
	require.Equal(t, "initcheck", r.Check, "%v", reps)
	require.Equal(t, "a", r.Param)
	require.Equal(t, 4, r.Line)
	require.Equal(t, 4, reps.Total, "threads 0 to 3 each read one unwritten float")
	reps = launchReports(t, p, f, c, 11)
	require.NotNil(t, reps)
	require.Equal(t, 4, reps.Total, "floats 8 to 11 were never written: %v", reps.Reports)
	require.Equal(t, int64(32), reps.Reports[0].Offset)
}

// initcheck alone (no redzones) on the inline shadow: what a kernel writes stays written
// for the next launch, a buffer whose size ends inside a granule is judged to its last
// byte, half a granule written leaves the other half unwritten, and a released buffer's
// marks are gone from memory allocated after it.
func TestCheckedInitcheckAcrossLaunches(t *testing.T) {
	p := newTest(t)
	release, err := p.CheckKernels(hipsys.CheckInit)
	require.NoError(t, err)
	defer release()
	f := checkedKernel(t, p, hipsys.CheckInit)
	const src = `
extern "C" __global__ void fill(float* a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = 7.0f;
}
`
	prog, err := p.RTCCreateProgram(src, "fill.hip", nil)
	require.NoError(t, err)
	require.NoError(t, p.RTCCompileProgram(prog, []string{hipsys.CheckOption(hipsys.CheckInit)}))
	image, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	require.NoError(t, p.RTCDestroyProgram(prog))
	mod, err := p.ModuleLoadData(image)
	require.NoError(t, err)
	defer func() { _ = p.ModuleUnload(mod) }()
	fill, err := p.ModuleGetFunction(mod, "fill")
	require.NoError(t, err)

	a, err := p.Malloc(4 * 13) // 52 bytes: the last granule holds one float of the buffer
	require.NoError(t, err)
	var args hipsys.KernelArgs
	args.Ptr(a).U32(9) // floats 0 to 8: float 9, in float 8's granule, stays unwritten
	require.NoError(t, p.ModuleLaunchKernel(fill, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, 0, &args))
	require.NoError(t, p.StreamSynchronize(0))
	require.Nil(t, launchReports(t, p, f, a, 8), "floats 0 to 8 were written by the kernel before")
	reps := launchReports(t, p, f, a, 12)
	require.NotNil(t, reps)
	require.Equal(t, 4, reps.Total, "floats 9 to 12 never written: %v", reps.Reports)
	require.Equal(t, int64(36), reps.Reports[0].Offset)
	require.NoError(t, p.MemcpyHtoD(a+36, make([]byte, 16)))
	require.Nil(t, launchReports(t, p, f, a, 12), "an upload wrote the rest")
	require.NoError(t, p.Free(a))

	// Memory allocated after a release starts unwritten on its own terms, whatever the
	// released buffer's marks were.
	b, err := p.Malloc(4 * 13)
	require.NoError(t, err)
	require.NoError(t, p.Memset(b, 0, 4*13))
	require.Nil(t, launchReports(t, p, f, b, 12))
	require.NoError(t, p.Free(b))
}

// Checks held by one caller are the memory side's until released, and the union of all
// holders': another Device of the process is not checked by them (its kernels carry no
// check option) and gets plain memory again once they are released.
func TestCheckKernelsIsHeldAndReleased(t *testing.T) {
	p := newTest(t)
	require.Equal(t, hipsys.Checks(0), p.kernelChecks())
	r1, err := p.CheckKernels(hipsys.CheckMemory)
	require.NoError(t, err)
	r2, err := p.CheckKernels(hipsys.CheckMemory | hipsys.CheckRace)
	require.NoError(t, err)
	require.Equal(t, hipsys.CheckMemory|hipsys.CheckRace, p.kernelChecks())
	require.Equal(t, []string{"-O2"}, p.checkedOptions([]string{"-O2"}), "only $CUBEHIP_CHECK reaches every compile")
	r2()
	r2() // once
	require.Equal(t, hipsys.CheckMemory, p.kernelChecks())
	r1()
	require.Equal(t, hipsys.Checks(0), p.kernelChecks())
	d, err := p.Malloc(64)
	require.NoError(t, err)
	require.NoError(t, p.Free(d))
	require.Empty(t, p.check.quarantine, "a release with no checks held frees at once")
}
