package conformance

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Every kernel is checked against the same computation done in Go, element by element.

func dim(x, y uint32) hipsys.Dim3 { return hipsys.Dim3{X: x, Y: y, Z: 1} }

func (s *suite) kernels(t *testing.T) {
	t.Run("vector add", s.vectorAdd)
	t.Run("saxpy", s.saxpy)
	t.Run("2-D grid", s.grid2D)
	t.Run("shared memory reduction", s.blockSum)
	t.Run("dynamic shared memory", s.blockReverse)
	t.Run("large dynamic shared memory", s.largeShared)
	t.Run("function attributes", s.funcAttributes)
	t.Run("atomic histogram", s.histogram)
	t.Run("templates and device functions", s.templates)
	t.Run("math functions", s.mathFuncs)
	t.Run("64-bit scalars and indices", s.wide)
	t.Run("parameter layout", s.params)
}

// params: saxpy(float alpha, const float* x, float* y, int n) is laid out as the C++ ABI
// puts it (the pointers 8-aligned after the float), with sizes the platform's compiler
// reports; a platform that cannot tell says hipErrorNotSupported.
func (s *suite) params(t *testing.T) {
	ps, err := s.p.FuncGetParams(s.function(t, "vector", "saxpy"))
	if hipsys.StatusOf(err) == hipsys.ErrorNotSupported {
		t.Skipf("%s does not report kernel parameters: %v", s.p.Name(), err)
	}
	require.NoError(t, err, "hipFuncGetParams")
	require.Len(t, ps, 4)
	offsets, sizes := []uint32{0, 8, 16, 24}, []uint32{4, 8, 8, 4}
	for i, p := range ps {
		assert.Equal(t, offsets[i], p.Offset, "parameter %d offset", i)
		assert.Equal(t, sizes[i], p.Size, "parameter %d size", i)
	}
	if ps[1].Kind != hipsys.ParamUnknown {
		kinds := []hipsys.ParamKind{hipsys.ParamValue, hipsys.ParamPointer, hipsys.ParamPointer, hipsys.ParamValue}
		for i, p := range ps {
			assert.Equal(t, kinds[i], p.Kind, "parameter %d kind", i)
		}
	}
}

func ramp(n int, scale, offset float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%1000)*scale + offset
	}
	return v
}

func (s *suite) vectorAdd(t *testing.T) {
	const n = 100_003 // not a multiple of the block: the bounds check must hold
	a, b := ramp(n, 0.5, 1), ramp(n, -0.25, 3)
	da, db, dc := s.upload(t, f32Bytes(a)), s.upload(t, f32Bytes(b)), s.zeros(t, 4*n)
	st := s.stream(t, hipsys.StreamNonBlocking)
	s.launch(t, s.function(t, "vector", "vector_add"), dim(blocks(n, 256), 1), dim(256, 1), 0, st,
		new(hipsys.KernelArgs).Ptr(da).Ptr(db).Ptr(dc).I32(n))
	s.sync(t, st)
	got := bytesF32(s.download(t, dc, 4*n))
	for i := range n {
		if got[i] != a[i]+b[i] {
			assert.Equal(t, a[i]+b[i], got[i], "c[%d]", i)
			return
		}
	}
}

func (s *suite) saxpy(t *testing.T) {
	const n = 4099
	const alpha = float32(2.5)
	x, y := ramp(n, 0.125, -7), ramp(n, 1, 0)
	dx, dy := s.upload(t, f32Bytes(x)), s.upload(t, f32Bytes(y))
	s.launch(t, s.function(t, "vector", "saxpy"), dim(blocks(n, 128), 1), dim(128, 1), 0, hipsys.NullStream,
		new(hipsys.KernelArgs).F32(alpha).Ptr(dx).Ptr(dy).I32(n))
	got := bytesF32(s.download(t, dy, 4*n))
	for i := range n {
		// alpha*x+y may be fused into one rounding on a device, so allow an ulp.
		want := alpha*x[i] + y[i]
		if !assert.InDelta(t, want, got[i], 1e-5*math.Max(1, math.Abs(float64(want))), "y[%d]", i) {
			return
		}
	}
}

func (s *suite) grid2D(t *testing.T) {
	const w, h = 333, 77
	out := s.zeros(t, 4*w*h)
	s.launch(t, s.function(t, "grid2d", "index2d"), dim(blocks(w, 16), blocks(h, 8)), dim(16, 8), 0, hipsys.NullStream,
		new(hipsys.KernelArgs).Ptr(out).I32(w).I32(h))
	got := bytesU32(s.download(t, out, 4*w*h))
	for i, v := range got {
		if v != uint32(i) {
			assert.Equal(t, uint32(i), v, "out[row %d][col %d]", i/w, i%w)
			return
		}
	}
}

func (s *suite) blockSum(t *testing.T) {
	const block, nblocks = 256, 64
	const n = block*nblocks - 100 // the last block is partial
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i%17) - 8 // small integers: every partial sum is exact in float32
	}
	din, dout := s.upload(t, f32Bytes(in)), s.zeros(t, 4*nblocks)
	s.launch(t, s.function(t, "reduce", "block_sum"), dim(nblocks, 1), dim(block, 1), 0, hipsys.NullStream,
		new(hipsys.KernelArgs).Ptr(din).Ptr(dout).I32(n))
	got := bytesF32(s.download(t, dout, 4*nblocks))
	want := make([]float32, nblocks)
	for i, v := range in {
		want[i/block] += v
	}
	assert.Equal(t, want, got)
}

func (s *suite) blockReverse(t *testing.T) {
	for _, block := range []int{64, 512} {
		const nblocks = 8
		n := block * nblocks
		in := ramp(n, 1, 0.5)
		din, dout := s.upload(t, f32Bytes(in)), s.zeros(t, 4*n)
		s.launch(t, s.function(t, "reduce", "block_reverse"), dim(nblocks, 1), dim(uint32(block), 1), uint32(4*block), hipsys.NullStream,
			new(hipsys.KernelArgs).Ptr(din).Ptr(dout))
		got := bytesF32(s.download(t, dout, 4*n))
		want := make([]float32, n)
		for b := range nblocks {
			for i := range block {
				want[b*block+i] = in[b*block+block-1-i]
			}
		}
		assert.Equal(t, want, got, "block of %d threads, %d bytes of dynamic shared memory", block, 4*block)
	}
}

func (s *suite) histogram(t *testing.T) {
	const n, nbins = 200_000, 37
	in := make([]uint32, n)
	want := make([]uint32, nbins)
	x := uint32(1)
	for i := range in {
		x = x*1664525 + 1013904223
		in[i] = x >> 8
		want[in[i]%nbins]++
	}
	din, bins := s.upload(t, u32Bytes(in)), s.zeros(t, 4*nbins)
	// Fewer threads than items: the grid-stride loop and the atomics both matter.
	s.launch(t, s.function(t, "atomics", "histogram"), dim(48, 1), dim(256, 1), 0, hipsys.NullStream,
		new(hipsys.KernelArgs).Ptr(din).Ptr(bins).I32(n).I32(nbins))
	assert.Equal(t, want, bytesU32(s.download(t, bins, 4*nbins)))
}

func (s *suite) templates(t *testing.T) {
	const n = 1000
	in := ramp(n, 0.01, -4) // cubes span -64..~160: the clamp bites at both ends
	din, dout, dint := s.upload(t, f32Bytes(in)), s.zeros(t, 4*n), s.zeros(t, 4*n)
	s.launch(t, s.function(t, "templates", "templated"), dim(blocks(n, 64), 1), dim(64, 1), 0, hipsys.NullStream,
		new(hipsys.KernelArgs).Ptr(din).Ptr(dout).Ptr(dint).I32(n))
	gotF, gotI := bytesF32(s.download(t, dout, 4*n)), bytesU32(s.download(t, dint, 4*n))
	for i, x := range in {
		wantF := min(max(x*x*x, -8), 8)
		wantI := uint32(min(3*i, 100))
		if !assert.InDelta(t, wantF, gotF[i], 1e-5*math.Max(1, math.Abs(float64(wantF))), "out_f[%d]", i) ||
			!assert.Equal(t, wantI, gotI[i], "out_i[%d]", i) {
			return
		}
	}
}

func (s *suite) mathFuncs(t *testing.T) {
	const n, k = 257, 10
	funcs := [k]struct {
		name string
		f    func(x float64) float64
	}{
		{"sqrtf", math.Sqrt}, {"expf", math.Exp}, {"sinf", math.Sin}, {"cosf", math.Cos},
		{"powf", func(x float64) float64 { return math.Pow(x, 1.5) }}, {"fabsf", math.Abs},
		{"fmaxf", func(x float64) float64 { return math.Max(x, 1) }},
		{"fminf", func(x float64) float64 { return math.Min(x, 1) }},
		{"logf", math.Log}, {"tanhf", math.Tanh},
	}
	in := make([]float32, n)
	for i := range in {
		in[i] = 0.01 + float32(i)*0.037 // (0, 9.5]: every function is defined and finite
	}
	din, dout := s.upload(t, f32Bytes(in)), s.zeros(t, 4*n*k)
	s.launch(t, s.function(t, "math", "math_funcs"), dim(blocks(n, 64), 1), dim(64, 1), 0, hipsys.NullStream,
		new(hipsys.KernelArgs).Ptr(din).Ptr(dout).I32(n))
	got := bytesF32(s.download(t, dout, 4*n*k))
	for j, fn := range funcs {
		for i, x := range in {
			want := fn.f(float64(x))
			// Device math is within a few ulps of the correctly rounded result
			// (CUDA's and ROCm's documented bounds); sinf and cosf near a root are
			// measured against the argument's scale instead, since their relative
			// error there is unbounded.
			tol := 1e-5 * math.Max(math.Abs(want), 1e-2)
			if fn.name == "sinf" || fn.name == "cosf" {
				tol = 1e-5 * math.Max(1, math.Abs(float64(x)))
			}
			if !assert.InDelta(t, want, float64(got[i*k+j]), tol, "%s(%g)", fn.name, x) {
				break
			}
		}
	}
}

func (s *suite) wide(t *testing.T) {
	t.Run("64-bit scalar", func(t *testing.T) {
		const x = uint64(0x1234_5678_9abc_def0)
		out := s.zeros(t, 8)
		one := dim(1, 1)
		s.launch(t, s.function(t, "wide", "split64"), one, one, 0, hipsys.NullStream,
			new(hipsys.KernelArgs).U64(x).Ptr(out))
		assert.Equal(t, []uint32{uint32(x >> 32), uint32(x & 0xffffffff)}, bytesU32(s.download(t, out, 8)))
	})
	t.Run("64-bit index", func(t *testing.T) {
		const n = 3000
		const bias = uint64(3)<<32 + 5
		out := s.zeros(t, 8*n)
		s.launch(t, s.function(t, "wide", "index64"), dim(blocks(n, 128), 1), dim(128, 1), 0, hipsys.NullStream,
			new(hipsys.KernelArgs).Ptr(out).U64(bias).I32(n))
		got := bytesU64(s.download(t, out, 8*n))
		for i, v := range got {
			if v != bias+uint64(i) {
				assert.Equal(t, bias+uint64(i), v, "out[%d]", i)
				return
			}
		}
	})
}
