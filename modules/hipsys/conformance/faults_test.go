package conformance_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/conformance"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
)

// Fault injection over a real platform: an injected failure must look like the
// platform's own (same *hipsys.Error shape) and leave no trace on the device.

func vectorSource(t *testing.T) string {
	for _, k := range conformance.Kernels() {
		if k.Name == "vector" {
			return k.Source
		}
	}
	t.Fatal("no vector kernel")
	return ""
}

// loadVectorAdd compiles the suite's vector source through w and returns vector_add.
func loadVectorAdd(t *testing.T, w hipsys.Platform) hipsys.Function {
	t.Helper()
	prog, err := w.RTCCreateProgram(vectorSource(t), "vector.hip", nil)
	require.NoError(t, err)
	defer func() { _ = w.RTCDestroyProgram(prog) }()
	require.NoError(t, w.RTCCompileProgram(prog, []string{"-O3"}))
	code, err := w.RTCGetCode(prog)
	require.NoError(t, err)
	m, err := w.ModuleLoadData(code)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.ModuleUnload(m) })
	fn, err := w.ModuleGetFunction(m, "vector_add")
	require.NoError(t, err)
	return fn
}

func deviceBytes(t *testing.T, p hipsys.Platform, data []byte) hipsys.DevicePtr {
	t.Helper()
	ptr, err := p.Malloc(uint64(len(data)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Free(ptr) })
	require.NoError(t, p.MemcpyHtoD(ptr, data))
	return ptr
}

func readBack(t *testing.T, p hipsys.Platform, ptr hipsys.DevicePtr, n int) []byte {
	t.Helper()
	require.NoError(t, p.DeviceSynchronize())
	out := make([]byte, n)
	require.NoError(t, p.MemcpyDtoH(out, ptr))
	return out
}

func assertInjected(t *testing.T, err error, call string) {
	t.Helper()
	var he *hipsys.Error
	require.True(t, errors.As(err, &he), "want an injected *hipsys.Error, got %v", err)
	assert.Equal(t, call, he.Call)
	assert.Equal(t, "cpu", he.Platform)
	assert.Equal(t, faults.Detail, he.Detail)
}

func TestFaultLaunchLeavesOutputUntouched(t *testing.T) {
	w := faults.Wrap(cpu(t))
	fn := loadVectorAdd(t, w)
	const n = 256
	ones := bytes.Repeat([]byte{0, 0, 0x80, 0x3f}, n) // float32 1.0
	a, b := deviceBytes(t, w, ones), deviceBytes(t, w, ones)
	marker := bytes.Repeat([]byte{0xcd}, 4*n)
	c := deviceBytes(t, w, marker)
	args := new(hipsys.KernelArgs).Ptr(a).Ptr(b).Ptr(c).I32(n)
	grid, block := hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: n, Y: 1, Z: 1}

	require.True(t, w.FailNth("hipModuleLaunchKernel", 2, hipsys.ErrorLaunchFailure))
	before := w.Calls("hipModuleLaunchKernel")
	require.NoError(t, w.ModuleLaunchKernel(fn, grid, block, 0, hipsys.NullStream, args), "the first launch goes through")
	require.NoError(t, w.Memset(c, 0xcd, 4*n))

	err := w.ModuleLaunchKernel(fn, grid, block, 0, hipsys.NullStream, args)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	assertInjected(t, err, "hipModuleLaunchKernel")
	assert.Equal(t, marker, readBack(t, w, c, 4*n), "the injected launch wrote nothing")

	require.NoError(t, w.ModuleLaunchKernel(fn, grid, block, 0, hipsys.NullStream, args), "the rule fired once")
	assert.Equal(t, bytes.Repeat([]byte{0, 0, 0, 0x40}, n), readBack(t, w, c, 4*n), "2.0 everywhere")
	assert.Equal(t, before+3, w.Calls("hipModuleLaunchKernel"))
}

func TestFaultCompile(t *testing.T) {
	w := faults.Wrap(cpu(t))
	prog, err := w.RTCCreateProgram(vectorSource(t), "vector.hip", nil)
	require.NoError(t, err)
	defer func() { assert.NoError(t, w.RTCDestroyProgram(prog)) }()

	w.Fail("hiprtcCompileProgram", hipsys.RTCErrorCompilation)
	err = w.RTCCompileProgram(prog, nil)
	assert.ErrorIs(t, err, hipsys.RTCErrorCompilation)
	assertInjected(t, err, "hiprtcCompileProgram")
	_, err = w.RTCGetCode(prog)
	assert.Error(t, err, "the injected failure compiled nothing, so there is no code")

	w.Clear("hiprtcCompileProgram")
	require.NoError(t, w.RTCCompileProgram(prog, nil))
	code, err := w.RTCGetCode(prog)
	require.NoError(t, err)
	assert.NotEmpty(t, code)
}

func TestFaultMallocAllocatesNothing(t *testing.T) {
	w := faults.Wrap(cpu(t))
	w.FailNext("hipMalloc", 2, hipsys.ErrorOutOfMemory)
	for range 2 {
		ptr, err := w.Malloc(1 << 20)
		assert.ErrorIs(t, err, hipsys.ErrorOutOfMemory)
		assertInjected(t, err, "hipMalloc")
		assert.Zero(t, ptr)
	}
	ptr, err := w.Malloc(1 << 20)
	require.NoError(t, err, "two failures, then through")
	assert.NoError(t, w.Free(ptr))
	assert.Equal(t, 3, w.Calls("hipMalloc"))
	assert.Zero(t, w.Calls("hipHostMalloc"), "calls are counted by name")
}

// TestFaultAsyncCopy fails the middle one of three queued uploads: the other two land,
// the failed one leaves its destination as it was, and the stream is still usable.
func TestFaultAsyncCopy(t *testing.T) {
	w := faults.Wrap(cpu(t))
	st, err := w.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer func() { assert.NoError(t, w.StreamDestroy(st)) }()
	h, err := w.HostMalloc(64, hipsys.HostMallocDefault)
	require.NoError(t, err)
	defer func() { assert.NoError(t, w.HostFree(h)) }()
	copy(h.Bytes(64), bytes.Repeat([]byte{7}, 64))
	dst := deviceBytes(t, w, make([]byte, 3*64))

	w.FailNth("hipMemcpyHtoDAsync", 2, hipsys.ErrorInvalidValue)
	for i := range 3 {
		err := w.MemcpyHtoDAsync(dst+hipsys.DevicePtr(64*i), h, 64, st)
		if i == 1 {
			assertInjected(t, err, "hipMemcpyHtoDAsync")
		} else {
			assert.NoError(t, err)
		}
	}
	require.NoError(t, w.StreamSynchronize(st))
	want := append(append(bytes.Repeat([]byte{7}, 64), make([]byte, 64)...), bytes.Repeat([]byte{7}, 64)...)
	assert.Equal(t, want, readBack(t, w, dst, 3*64))
}
