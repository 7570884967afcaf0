package amd

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// paramsSource has a kernel for each kind of parameter a HIP kernel takes: pointers,
// ints, a double, a struct by value (with padding), a char, and one whose printf makes
// the compiler append hidden arguments after the explicit ones.
const paramsSource = `#include <hip/hip_runtime.h>
struct Pair { double d; int i; char c; };  // 16 bytes, 8-aligned
extern "C" __global__ void mixed(float* out, int n, double x, Pair s, const char* __restrict__ in, char c, long long k) {
    out[n] = x + s.d + s.i + s.c + in[0] + c + k;
}
extern "C" __global__ void scalars_first(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void with_printf(int* p, int n) { printf("%d\n", n); p[threadIdx.x] = n; }
extern "C" __global__ void nothing() {}
`

var (
	paramsOnce sync.Once
	paramsCode []byte
	paramsErr  error
)

// paramsObject compiles paramsSource for gfx90a with the installed ROCm's hiprtc (no
// GPU needed), once per test binary.
func paramsObject(t *testing.T) []byte {
	t.Helper()
	paramsOnce.Do(func() {
		var log string
		paramsCode, log, paramsErr = CompileFor("gfx90a", paramsSource, "params.hip", nil)
		if paramsErr != nil {
			paramsErr = errors.Join(paramsErr, errors.New(log))
		}
	})
	if errors.Is(paramsErr, dl.ErrNotFound) && os.Getenv("CUBEHIP_REQUIRE_AMD") == "" {
		t.Skipf("no ROCm installed: %v", paramsErr)
	}
	require.NoError(t, paramsErr)
	return paramsCode
}

var wantParams = map[string][]hipsys.KernelParam{
	"mixed": {
		{Offset: 0, Size: 8, Kind: hipsys.ParamPointer}, {Offset: 8, Size: 4, Kind: hipsys.ParamValue},
		{Offset: 16, Size: 8, Kind: hipsys.ParamValue}, {Offset: 24, Size: 16, Kind: hipsys.ParamValue},
		{Offset: 40, Size: 8, Kind: hipsys.ParamPointer}, {Offset: 48, Size: 1, Kind: hipsys.ParamValue},
		{Offset: 56, Size: 8, Kind: hipsys.ParamValue},
	},
	"scalars_first": {
		{Offset: 0, Size: 4, Kind: hipsys.ParamValue}, {Offset: 4, Size: 4, Kind: hipsys.ParamValue},
		{Offset: 8, Size: 8, Kind: hipsys.ParamPointer}, {Offset: 16, Size: 8, Kind: hipsys.ParamPointer},
	},
	"with_printf": {{Offset: 0, Size: 8, Kind: hipsys.ParamPointer}, {Offset: 8, Size: 4, Kind: hipsys.ParamValue}},
	"nothing":     {},
}

// The parameters come out of a real hiprtc code object as its metadata describes them,
// hidden arguments left out, whether the object is a bare ELF or inside an offload
// bundle.
func TestKernelParamsFromARealCodeObject(t *testing.T) {
	code := paramsObject(t)
	got, err := KernelParams(code, "gfx90a")
	require.NoError(t, err)
	assert.Equal(t, wantParams, got)

	b := bundle([][2]string{{"host-x86_64-unknown-linux-gnu", ""}, {"hipv4-amdgcn-amd-amdhsa--gfx90a", string(code)}})
	got, err = KernelParams(b, "gfx90a")
	require.NoError(t, err)
	assert.Equal(t, wantParams, got, "the same from inside an offload bundle")

	// The printf kernel really has hidden arguments in its metadata: without the filter
	// its list would be longer, so the test above would catch a filter that broke.
	f, err := elf.NewFile(bytes.NewReader(code))
	require.NoError(t, err)
	kinds := rawValueKinds(t, f)
	assert.Greater(t, len(kinds["with_printf"]), 2)
	hidden := 0
	for _, k := range kinds["with_printf"] {
		if strings.HasPrefix(k, "hidden_") {
			hidden++
		}
	}
	assert.Equal(t, len(kinds["with_printf"])-2, hidden)
}

// rawValueKinds is every argument's .value_kind per kernel, hidden ones included.
func rawValueKinds(t *testing.T, f *elf.File) map[string][]string {
	t.Helper()
	var desc []byte
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOTE {
			data, err := s.Data()
			require.NoError(t, err)
			if d, ok, err := findNote(data, f.ByteOrder, "AMDGPU", ntAMDGPUMetadata); err == nil && ok {
				desc = d
			}
		}
	}
	require.NotNil(t, desc, "no metadata note")
	v, err := decodeMsgpack(desc)
	require.NoError(t, err)
	out := map[string][]string{}
	for _, k := range v.(map[string]any)["amdhsa.kernels"].([]any) {
		km := k.(map[string]any)
		args, _ := km[".args"].([]any)
		name := km[".name"].(string)
		for _, a := range args {
			out[name] = append(out[name], a.(map[string]any)[".value_kind"].(string))
		}
	}
	return out
}

// FuncGetParams answers through the platform, over the fake libamdhip64 (whose only
// kernel is named k): loading the real code object reads its metadata.
func TestFuncGetParamsThroughThePlatform(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
extern "C" __global__ void k(int* out, int v) { out[0] = v; }
`
	paramsObject(t) // skips without ROCm
	code, log, err := CompileFor("gfx90a", src, "k.hip", nil)
	require.NoError(t, err, log)
	p := fakePlatform(t)

	m, err := p.ModuleLoadData(code)
	require.NoError(t, err)
	fn, err := p.ModuleGetFunction(m, "k")
	require.NoError(t, err)
	got, err := p.FuncGetParams(fn)
	require.NoError(t, err)
	assert.Equal(t, []hipsys.KernelParam{{Offset: 0, Size: 8, Kind: hipsys.ParamPointer}, {Offset: 8, Size: 4, Kind: hipsys.ParamValue}}, got)
	got[0].Size = 99
	again, err := p.FuncGetParams(fn)
	require.NoError(t, err)
	assert.Equal(t, uint32(8), again[0].Size, "the caller's slice is its own")

	_, err = p.FuncGetParams(0x4242)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)
	require.NoError(t, p.ModuleUnload(m))
	_, err = p.FuncGetParams(fn)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle, "the function went with its module")

	// A code object whose metadata does not describe the kernel asked for: the fake
	// library finds "k" in any image, the metadata of this one knows only "other".
	other, log, err := CompileFor("gfx90a", `extern "C" __global__ void other(int* p) { p[0] = 1; }`, "o.hip", nil)
	require.NoError(t, err, log)
	m, err = p.ModuleLoadData(other)
	require.NoError(t, err)
	fn, err = p.ModuleGetFunction(m, "k")
	require.NoError(t, err)
	_, err = p.FuncGetParams(fn)
	assert.ErrorIs(t, err, hipsys.ErrorNotSupported)
	assert.ErrorContains(t, err, "does not describe kernel k")
	require.NoError(t, p.ModuleUnload(m))

	// A compressed bundle loads (ROCm 6.2 reads it) but cubehip cannot read its metadata.
	m, err = p.ModuleLoadData([]byte("CCOB\x01\x00\x00\x00 compressed"))
	require.NoError(t, err)
	fn, err = p.ModuleGetFunction(m, "k")
	require.NoError(t, err)
	_, err = p.FuncGetParams(fn)
	assert.ErrorIs(t, err, hipsys.ErrorNotSupported)
	assert.ErrorContains(t, err, "compressed offload bundle")
	require.NoError(t, p.ModuleUnload(m))
}

// A launch whose arguments differ from the kernel's parameters in its code object's
// metadata is refused before ROCm sees it: one pointer for k(int* out, int v) would
// have the library read a second argument pointer past the list (the fake library, as
// ROCm does, reads one per parameter), and nil args would launch k with none. The
// right arguments launch; a code object without readable metadata launches unchecked.
func TestLaunchArgumentsCheckedAgainstTheMetadata(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
extern "C" __global__ void k(int* out, int v) { out[0] = v; }
`
	paramsObject(t) // skips without ROCm
	code, log, err := CompileFor("gfx90a", src, "k.hip", nil)
	require.NoError(t, err, log)
	p := fakePlatform(t)
	m, err := p.ModuleLoadData(code)
	require.NoError(t, err)
	fn, err := p.ModuleGetFunction(m, "k")
	require.NoError(t, err)
	out, err := p.Malloc(4)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(out)) }()
	require.NoError(t, p.Memset(out, 0, 4))

	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	for _, c := range []struct {
		name   string
		args   *hipsys.KernelArgs
		detail string
	}{
		{"one pointer for two parameters", new(hipsys.KernelArgs).Ptr(out), "kernel k takes 2 arguments, got 1"},
		{"nil args", nil, "kernel k takes 2 arguments, got 0"},
		{"one too many", new(hipsys.KernelArgs).Ptr(out).I32(1).I32(2), "kernel k takes 2 arguments, got 3"},
		{"an I64 for the int", new(hipsys.KernelArgs).Ptr(out).I64(5), "argument 1 of kernel k is 8 bytes; the parameter takes 4"},
	} {
		err := p.ModuleLaunchKernel(fn, one, one, 0, 0, c.args)
		var he *hipsys.Error
		require.ErrorAs(t, err, &he, c.name)
		assert.Equal(t, hipsys.ErrorInvalidValue, he.Status, c.name)
		assert.Equal(t, "hipModuleLaunchKernel", he.Call, c.name)
		assert.Equal(t, c.detail, he.Detail, c.name)
	}
	got := make([]byte, 4)
	require.NoError(t, p.MemcpyDtoH(got, out))
	assert.Equal(t, []byte{0, 0, 0, 0}, got, "no refused launch ran")

	var args hipsys.KernelArgs
	require.NoError(t, p.ModuleLaunchKernel(fn, one, one, 0, 0, args.Ptr(out).I32(42)))
	require.NoError(t, p.MemcpyDtoH(got, out))
	assert.Equal(t, []byte{42, 0, 0, 0}, got)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_ = p.ModuleLaunchKernel(fn, one, one, 0, 0, args.Reset().Ptr(out).I32(7))
	}), "a checked launch allocates nothing")
	require.NoError(t, p.ModuleUnload(m))
	assert.ErrorIs(t, p.ModuleLaunchKernel(fn, one, one, 0, 0, args.Reset().Ptr(out).I32(7)), hipsys.ErrorInvalidHandle)
}
