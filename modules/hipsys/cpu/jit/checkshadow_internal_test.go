package jit

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit/internal/hostmem"
)

// Where the shadow cannot be reserved (its range taken here; strict overcommit or an
// address-space limit elsewhere), memcheck makes every access a call instead and still
// reports, and a module built for the shadow refuses to load, saying why. Run in a
// process of its own, whose first act is to take the range.
func TestMemcheckWithoutTheShadow(t *testing.T) {
	if os.Getenv("CUBEHIP_TEST_SHADOW_TAKEN") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMemcheckWithoutTheShadow$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "CUBEHIP_TEST_SHADOW_TAKEN=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestMemcheckWithoutTheShadow")
		return
	}
	_, _, errno := unix.Syscall6(unix.SYS_MMAP, shadowOffset, 4096, unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uintptr(0), 0)
	require.Zero(t, errno)
	require.False(t, shadowReady())
	require.ErrorIs(t, shadow.err, unix.EEXIST)

	const src = `
extern "C" __global__ void scale(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 2.0f * in[i];
}`
	img, log, err := NewCompiler(t.TempDir()).Compile(src, "scale.hip", nil, []string{CheckOption(hipsys.CheckMemory)})
	require.NoError(t, err, log)
	im, err := decodeImage(img)
	require.NoError(t, err)
	require.Zero(t, im.flags&flagShadow, "compiled for a call per access")
	m, err := Load(img)
	require.NoError(t, err)
	defer m.Close()
	f, err := m.Function("scale")
	require.NoError(t, err)
	region := func() (uintptr, CheckRegion) {
		raw := hostmem.Alloc(64*4 + 128)
		require.NotZero(t, raw)
		t.Cleanup(func() { hostmem.Free(raw) })
		return raw + 64, CheckRegion{Lo: uint64(raw), Base: uint64(raw) + 64, Size: 64 * 4, Hi: uint64(raw) + 64 + 64*4 + 64}
	}
	pin, rin := region()
	pout, rout := region()
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout)).I32(64)
	err = f.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 128, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []CheckRegion{rin, rout})
	var reps *hipsys.CheckReports
	require.True(t, errors.As(err, &reps), "%v", err)
	require.Equal(t, uint32(64), reps.Reports[0].Thread.X)
	require.Equal(t, 4, reps.Reports[0].Line)

	im.flags |= flagShadow
	_, err = Load(im.encode())
	require.ErrorContains(t, err, "inline shadow")
}
