package conformance

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"math"
	"math/bits"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The corpus: kernels written in the idioms real HIP and CUDA code uses (shared-memory
// tiling, atomics histograms, warp-shuffle reductions and scans, ballots, templates
// behind extern "C" wrappers, constant memory, printf, half precision, 3-D grids, double
// math, cooperative groups, conditional compilation), one source on every platform,
// each result checked against a reference computed here in Go.

// CorpusOptions are the hiprtc options every corpus kernel is compiled with (one of the
// sources has a kernel behind -DWITH_SCALE).
var CorpusOptions = []string{"-O3", "-DWITH_SCALE"}

// Corpus returns the corpus's kernel sources (kernels/corpus/*.hip), sorted by name, each
// with its entry points.
func Corpus() []Kernel {
	files, err := fs.Glob(kernelFiles, "kernels/corpus/*.hip")
	if err != nil {
		panic("conformance: " + err.Error())
	}
	out := make([]Kernel, 0, len(files))
	for _, f := range files {
		src, err := kernelFiles.ReadFile(f)
		if err != nil {
			panic("conformance: embedded " + f + ": " + err.Error())
		}
		k := Kernel{Name: strings.TrimSuffix(path.Base(f), ".hip"), Source: string(src)}
		for _, m := range entryRE.FindAllStringSubmatch(disabledRE.ReplaceAllString(k.Source, ""), -1) {
			k.Entries = append(k.Entries, m[1])
		}
		out = append(out, k)
	}
	return out
}

// disabledRE matches an `#if 0` block, whose kernels are no entries.
var disabledRE = regexp.MustCompile(`(?ms)^#if 0$.*?^#endif$`)

// RunCorpus compiles every corpus kernel on p (device 0), runs it and checks its results
// against the Go reference, one subtest per kernel source. CaptureStdout, when not nil,
// runs a function with the process's standard output captured, for the printf kernel
// (which is skipped without it).
func RunCorpus(t *testing.T, p hipsys.Platform, captureStdout func(func()) string) {
	s := &suite{p: p, modules: map[string]hipsys.Module{}}
	t.Cleanup(s.unloadModules)
	var err error
	s.props, err = p.GetDeviceProperties(0)
	require.NoError(t, err)
	c := &corpusRun{s: s, capture: captureStdout}
	kernels := Corpus()
	require.Len(t, kernels, len(corpusChecks)+len(deviceLibraryChecks), "every corpus kernel has a check and every check a kernel")
	for _, k := range kernels {
		check, ok := corpusChecks[k.Name]
		if !ok {
			check, ok = deviceLibraryChecks[k.Name]
		}
		require.True(t, ok, "corpus kernel %s has no check", k.Name)
		t.Run(k.Name, func(t *testing.T) {
			m, err := p.ModuleLoadData(s.compile(t, k.Source, k.Name+".hip", nil, CorpusOptions))
			require.NoError(t, err)
			t.Cleanup(func() { _ = p.ModuleUnload(m) })
			c.mod = m
			check(t, c)
		})
	}
}

type corpusRun struct {
	s       *suite
	mod     hipsys.Module
	capture func(func()) string
}

func (c *corpusRun) fn(t *testing.T, name string) hipsys.Function {
	t.Helper()
	f, err := c.s.p.ModuleGetFunction(c.mod, name)
	require.NoError(t, err, "hipModuleGetFunction %s", name)
	return f
}

func (c *corpusRun) launch(t *testing.T, name string, grid, block hipsys.Dim3, args *hipsys.KernelArgs) {
	t.Helper()
	c.s.launch(t, c.fn(t, name), grid, block, 0, 0, args)
}

func up[T any](t *testing.T, c *corpusRun, v []T) hipsys.DevicePtr {
	t.Helper()
	b, err := binary.Append(nil, binary.LittleEndian, v)
	require.NoError(t, err)
	return c.s.upload(t, b)
}

func down[T any](t *testing.T, c *corpusRun, p hipsys.DevicePtr, n int) []T {
	t.Helper()
	out := make([]T, n)
	size := binary.Size(out)
	_, err := binary.Decode(c.s.download(t, p, size), binary.LittleEndian, out)
	require.NoError(t, err)
	return out
}

func d1(x uint32) hipsys.Dim3       { return hipsys.Dim3{X: x, Y: 1, Z: 1} }
func d3(x, y, z uint32) hipsys.Dim3 { return hipsys.Dim3{X: x, Y: y, Z: z} }

// lcg is a small deterministic generator for inputs.
type lcg uint64

func (g *lcg) next() uint32 {
	*g = *g*6364136223846793005 + 1442695040888963407
	return uint32(*g >> 33)
}

// f16 rounds f to IEEE binary16 (nearest even), for the half-precision references.
func f16(f float32) float32 {
	if f == 0 || math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		return f
	}
	e := max(math.Floor(math.Log2(math.Abs(float64(f)))), -14)
	q := math.Ldexp(1, int(e)-10)
	return float32(math.RoundToEven(float64(f)/q) * q)
}

// f16bits encodes a value that is exactly a binary16 (f16's result) as its 16 bits.
func f16bits(f float32) uint16 {
	if f == 0 {
		return uint16(math.Float32bits(f) >> 16 & 0x8000)
	}
	sign := uint16(0)
	if f < 0 {
		sign, f = 0x8000, -f
	}
	e := int(math.Floor(math.Log2(float64(f))))
	if e < -14 {
		return sign | uint16(math.Round(float64(f)/math.Ldexp(1, -24)))
	}
	m := math.Round((float64(f)/math.Ldexp(1, e) - 1) * 1024)
	return sign | uint16(e+15)<<10 | uint16(m)
}

func f16value(b uint16) float32 {
	sign := float32(1)
	if b&0x8000 != 0 {
		sign = -1
	}
	e, m := int(b>>10&0x1f), float64(b&0x3ff)
	if e == 0 {
		return sign * float32(m*math.Ldexp(1, -24))
	}
	return sign * float32((1+m/1024)*math.Ldexp(1, e-15))
}

var corpusChecks = map[string]func(t *testing.T, c *corpusRun){
	"matmul_tiled": func(t *testing.T, c *corpusRun) {
		const M, N, K = 70, 50, 45 // not multiples of the tile: the edges are guarded
		g := lcg(1)
		a, b := make([]float32, M*K), make([]float32, K*N)
		for i := range a {
			a[i] = float32(g.next()%17) - 8
		}
		for i := range b {
			b[i] = float32(g.next()%13) - 6
		}
		dc := c.s.zeros(t, 4*M*N)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, a)).Ptr(up(t, c, b)).Ptr(dc).I32(M).I32(N).I32(K)
		c.launch(t, "matmul_tiled", d3((N+15)/16, (M+15)/16, 1), d3(16, 16, 1), &args)
		got := down[float32](t, c, dc, M*N)
		for r := range M {
			for col := range N {
				var want float32
				for k := range K {
					want += a[r*K+k] * b[k*N+col]
				}
				require.Equal(t, want, got[r*N+col], "C[%d][%d]", r, col) // small integers: exact
			}
		}
	},
	"transpose_padded": func(t *testing.T, c *corpusRun) {
		const W, H = 100, 70
		in := make([]float32, W*H)
		for i := range in {
			in[i] = float32(i)
		}
		out := c.s.zeros(t, 4*W*H)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(out).I32(W).I32(H)
		c.launch(t, "transpose", d3((W+31)/32, (H+31)/32, 1), d3(32, 8, 1), &args)
		got := down[float32](t, c, out, W*H)
		for y := range H {
			for x := range W {
				require.Equal(t, in[y*W+x], got[x*H+y], "(%d,%d)", x, y)
			}
		}
	},
	"histogram_atomics": func(t *testing.T, c *corpusRun) {
		const n = 1 << 16
		g := lcg(2)
		data := make([]uint8, n)
		want := make([]uint32, 256)
		for i := range data {
			data[i] = uint8(g.next() >> 7)
			want[data[i]]++
		}
		bins := c.s.zeros(t, 4*256)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, data)).I32(n).Ptr(bins)
		c.launch(t, "histogram256", d1(32), d1(256), &args)
		assert.Equal(t, want, down[uint32](t, c, bins, 256))

		const m = 1000
		v := make([]int32, m)
		var sum uint64
		vmax, vmin, over := int32(math.MinInt32), int32(math.MaxInt32), int32(0)
		for i := range v {
			v[i] = int32(g.next()%300) - 50
			vmax, vmin = max(vmax, v[i]), min(vmin, v[i])
			if v[i] > 100 {
				over++
			}
			sum += uint64(int64(v[i]))
		}
		stats := up(t, c, []int32{math.MinInt32, math.MaxInt32, 0, -1, -1})
		dsum := c.s.zeros(t, 8)
		args.Reset().Ptr(up(t, c, v)).I32(m).Ptr(stats).Ptr(dsum)
		c.launch(t, "stats", d1((m+127)/128), d1(128), &args)
		got := down[int32](t, c, stats, 5)
		assert.Equal(t, []int32{vmax, vmin, over}, got[:3])
		assert.True(t, got[3] >= 0 && got[3] < m, "atomicExch left an index: %d", got[3])
		assert.True(t, got[4] >= 0 && got[4] < m, "atomicCAS let one index claim the slot: %d", got[4])
		assert.Equal(t, sum, down[uint64](t, c, dsum, 1)[0])
	},
	"stencil_interior": func(t *testing.T, c *corpusRun) {
		const n = 77 // blocks that end past the interior's edge
		in := make([]float32, n*n)
		for i := range in {
			in[i] = float32((i*7919)%101) / 8
		}
		dIn := up(t, c, in)
		check := func(name string, grid, block hipsys.Dim3, want func(x, y int) float32) {
			out := c.s.zeros(t, 4*n*n)
			var args hipsys.KernelArgs
			args.Ptr(dIn).Ptr(out).I32(n)
			c.launch(t, name, grid, block, &args)
			got := down[float32](t, c, out, n*n)
			for y := range n {
				for x := range n {
					w := float32(0)
					if x > 0 && x < n-1 && y > 0 && y < n-1 {
						w = want(x, y)
					}
					require.Equal(t, w, got[y*n+x], "%s (%d,%d)", name, x, y)
				}
			}
		}
		check("jacobi_interior", d3((n-2+31)/32, n-2, 1), d3(32, 1, 1), func(x, y int) float32 {
			return 0.25 * (in[y*n+x-1] + in[y*n+x+1] + in[(y-1)*n+x] + in[(y+1)*n+x])
		})
		check("jacobi_interior_2d", d3((n-2+15)/16, (n-2+7)/8, 1), d3(16, 8, 1), func(x, y int) float32 {
			return in[y*n+x] - 0.5*(in[y*n+x-1]+in[y*n+x+1])
		})
	},
	"warp_reduce": func(t *testing.T, c *corpusRun) {
		const n = 100003
		g := lcg(3)
		in := make([]int32, n)
		var want int64
		for i := range in {
			in[i] = int32(g.next()%2001) - 1000
			want += int64(in[i])
		}
		out := c.s.zeros(t, 8)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).I32(n).Ptr(out)
		c.launch(t, "reduce_sum", d1(24), d1(256), &args)
		assert.Equal(t, want, int64(down[uint64](t, c, out, 1)[0]))
	},
	"warp_scan": func(t *testing.T, c *corpusRun) {
		const block, n = 256, 256*9 - 31
		in := make([]int32, n)
		for i := range in {
			in[i] = int32(i%7) - 2
		}
		out := c.s.zeros(t, 4*n)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(out).I32(n)
		c.launch(t, "block_scan", d1((n+block-1)/block), d1(block), &args)
		got := down[int32](t, c, out, n)
		var run int32
		for i := range n {
			if i%block == 0 {
				run = 0
			}
			run += in[i]
			require.Equal(t, run, got[i], "element %d", i)
		}
	},
	"ballot_compact": func(t *testing.T, c *corpusRun) {
		W := c.s.props.WarpSize
		const n = 512
		g := lcg(4)
		in := make([]int32, n)
		for i := range in {
			in[i] = int32(g.next()%200) - 100
		}
		warps := n / W
		out, counts, flags := c.s.zeros(t, 4*n), c.s.zeros(t, 4*warps), c.s.zeros(t, 4*warps)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(out).Ptr(counts).Ptr(flags)
		c.launch(t, "compact_positive", d1(n/128), d1(128), &args)
		gotOut, gotCounts, gotFlags := down[int32](t, c, out, n), down[int32](t, c, counts, warps), down[int32](t, c, flags, warps)
		for w := range warps {
			var kept []int32
			anyBig, allNonneg := int32(0), int32(2)
			for l := range W {
				v := in[w*W+l]
				if v > 0 {
					kept = append(kept, v)
				}
				if v > 90 {
					anyBig = 1
				}
				if v < 0 {
					allNonneg = 0
				}
			}
			require.Equal(t, int32(len(kept)), gotCounts[w], "warp %d count", w)
			require.Equal(t, kept, gotOut[w*W:w*W+len(kept)], "warp %d compacted values", w)
			require.Equal(t, anyBig+allNonneg, gotFlags[w], "warp %d any/all", w)
		}
	},
	"templates_wrappers": func(t *testing.T, c *corpusRun) {
		const n = 300
		x32, y32 := make([]float32, n), make([]float32, n)
		x64, y64 := make([]float64, n), make([]float64, n)
		iv := make([]int32, n)
		for i := range n {
			x32[i], y32[i] = float32(i)*0.5, float32(n-i)
			x64[i], y64[i] = float64(i)*0.25, float64(i)*3
			iv[i] = int32(i) - 150
		}
		dy32, dy64, div := up(t, c, y32), up(t, c, y64), up(t, c, iv)
		var args hipsys.KernelArgs
		args.F32(2).Ptr(up(t, c, x32)).Ptr(dy32).I32(n)
		c.launch(t, "axpy_f32", d1(3), d1(128), &args)
		args.Reset().F64(-1.5).Ptr(up(t, c, x64)).Ptr(dy64).I32(n)
		c.launch(t, "axpy_f64", d1(3), d1(128), &args)
		args.Reset().Ptr(div).I32(-20).I32(40).I32(n)
		c.launch(t, "clamp_i32", d1(3), d1(128), &args)
		g32, g64, gi := down[float32](t, c, dy32, n), down[float64](t, c, dy64, n), down[int32](t, c, div, n)
		for i := range n {
			require.Equal(t, 2*x32[i]+y32[i], g32[i])
			require.Equal(t, -1.5*x64[i]+y64[i], g64[i])
			require.Equal(t, min(max(iv[i], -20), 40), gi[i])
		}
	},
	"constant_conv": func(t *testing.T, c *corpusRun) {
		const n = 1000
		taps := []float32{0.05, 0.1, 0.2, 0.3, 0.2, 0.1, 0.05}
		in := make([]float32, n)
		for i := range in {
			in[i] = float32(math.Sin(float64(i) * 0.1))
		}
		out := c.s.zeros(t, 4*n)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(out).I32(n)
		c.launch(t, "convolve", d1((n+127)/128), d1(128), &args)
		got := down[float32](t, c, out, n)
		for i := range n {
			var want float32
			for k := -3; k <= 3; k++ {
				if j := i + k; j >= 0 && j < n {
					want += taps[k+3] * in[j]
				}
			}
			require.InDelta(t, want, got[i], 1e-6, "element %d", i)
		}
	},
	"symbol_filter": func(t *testing.T, c *corpusRun) {
		const w, h = 97, 61
		var g lcg = 11
		img := make([]uint8, w*h)
		for i := range img {
			img[i] = uint8(g.next())
		}
		mask, size, err := c.s.p.ModuleGetGlobal(c.mod, "filter_mask")
		require.NoError(t, err)
		require.Equal(t, uint64(36), size, "float[3][3]")
		clipped, size, err := c.s.p.ModuleGetGlobal(c.mod, "clipped_pixels")
		require.NoError(t, err)
		require.Equal(t, uint64(4), size)
		din, dout := up(t, c, img), c.s.zeros(t, w*h)
		// Integer taps keep every sum exact in float32, so the reference is exact too.
		for _, taps := range [][9]float32{
			{0, 0, 0, 0, 1, 0, 0, 0, 0},     // identity
			{1, 1, 1, 1, 1, 1, 1, 1, 1},     // box sum: clips wherever the 3x3 sum passes 255
			{0, -1, 0, -1, 4, -1, 0, -1, 0}, // Laplacian: clips below 0 and above 255
		} {
			b, err := binary.Append(nil, binary.LittleEndian, taps[:])
			require.NoError(t, err)
			require.NoError(t, c.s.p.MemcpyHtoD(mask, b), "writing filter_mask")
			require.NoError(t, c.s.p.MemcpyHtoD(clipped, make([]byte, 4)), "zeroing clipped_pixels")
			var args hipsys.KernelArgs
			args.Ptr(din).Ptr(dout).I32(w).I32(h)
			c.launch(t, "filter3x3", d3((w+15)/16, (h+15)/16, 1), d3(16, 16, 1), &args)
			got := down[uint8](t, c, dout, w*h)
			wantClipped := uint32(0)
			for y := range h {
				for x := range w {
					var acc float32
					for dy := -1; dy <= 1; dy++ {
						for dx := -1; dx <= 1; dx++ {
							sx, sy := min(max(x+dx, 0), w-1), min(max(y+dy, 0), h-1)
							acc += taps[(dy+1)*3+dx+1] * float32(img[sy*w+sx])
						}
					}
					if acc < 0 || acc > 255 {
						wantClipped++
					}
					require.Equal(t, uint8(min(max(acc, 0), 255)), got[y*w+x], "pixel (%d, %d) with taps %v", x, y, taps)
				}
			}
			n := down[uint32](t, c, clipped, 1)
			require.Equal(t, wantClipped, n[0], "clipped_pixels with taps %v", taps)
		}
	},
	"printf_trace": func(t *testing.T, c *corpusRun) {
		const blocks, block = 4, 64
		in := make([]int32, blocks*block)
		for i := range in {
			in[i] = int32(i*3 + 1)
		}
		out := c.s.zeros(t, 4*len(in))
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(out)
		run := func() {
			c.launch(t, "trace", d1(blocks), d1(block), &args)
			require.NoError(t, c.s.p.DeviceSynchronize())
		}
		if c.capture == nil {
			run()
		} else {
			text := c.capture(run)
			for b := range blocks {
				v := in[b*block]
				line := fmt.Sprintf("block %d of %d: first value %d scaled %.1f\n", b, blocks, v, 0.5*float64(v))
				assert.Equal(t, 1, strings.Count(text, line), "printf output %q lacks %q", text, line)
			}
		}
		got := down[int32](t, c, out, len(in))
		for i := range in {
			require.Equal(t, 2*in[i], got[i])
		}
	},
	"half_axpy": func(t *testing.T, c *corpusRun) {
		const n = 256 // half2 pairs
		x, y := make([]uint16, 2*n), make([]uint16, 2*n)
		xf, yf := make([]float32, 2*n), make([]float32, 2*n)
		for i := range 2 * n {
			xf[i], yf[i] = f16(float32(i%50)*0.25-6), f16(float32(i%37)*0.5-9)
			x[i], y[i] = f16bits(xf[i]), f16bits(yf[i])
		}
		const a = 1.5
		dy := up(t, c, y)
		var args hipsys.KernelArgs
		args.I32(n).Raw(binary.LittleEndian.AppendUint16(nil, f16bits(a)), 2).Ptr(up(t, c, x)).Ptr(dy)
		c.launch(t, "haxpy", d1(2), d1(128), &args)
		got := down[uint16](t, c, dy, 2*n)
		for i := range 2 * n {
			want := f16(float32(math.FMA(a, float64(xf[i]), float64(yf[i]))))
			require.Equal(t, want, f16value(got[i]), "element %d: %v*%v+%v", i, a, xf[i], yf[i])
		}
		// Float to half on the device, then a dot product of halves in float.
		fin := make([]float32, 2*n)
		for i := range fin {
			fin[i] = float32(i)*0.013 - 3.3
		}
		dh := c.s.zeros(t, 2*2*n)
		args.Reset().I32(2 * n).Ptr(up(t, c, fin)).Ptr(dh)
		c.launch(t, "to_half", d1(4), d1(128), &args)
		hs := down[uint16](t, c, dh, 2*n)
		for i := range fin {
			require.Equal(t, f16(fin[i]), f16value(hs[i]), "__float2half(%v)", fin[i])
		}
		dot := c.s.zeros(t, 4)
		args.Reset().I32(2 * n).Ptr(dh).Ptr(up(t, c, x)).Ptr(dot)
		c.launch(t, "hdot", d1(4), d1(128), &args)
		var want float64
		for i := range fin {
			want += float64(f16(fin[i])) * float64(xf[i])
		}
		assert.InDelta(t, want, float64(down[float32](t, c, dot, 1)[0]), 1e-2)
	},
	"grid3d": func(t *testing.T, c *corpusRun) {
		const nx, ny, nz = 19, 13, 11
		u := make([]float32, nx*ny*nz)
		for i := range u {
			u[i] = float32(i % 29)
		}
		out := c.s.zeros(t, 4*len(u))
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, u)).Ptr(out).I32(nx).I32(ny).I32(nz)
		c.launch(t, "laplacian3d", d3((nx+7)/8, (ny+3)/4, (nz+3)/4), d3(8, 4, 4), &args)
		got := down[float32](t, c, out, len(u))
		at := func(x, y, z int) float32 {
			if x < 0 || y < 0 || z < 0 || x >= nx || y >= ny || z >= nz {
				return 0
			}
			return u[(z*ny+y)*nx+x]
		}
		for z := range nz {
			for y := range ny {
				for x := range nx {
					want := at(x-1, y, z) + at(x+1, y, z) + at(x, y-1, z) + at(x, y+1, z) + at(x, y, z-1) + at(x, y, z+1) - 6*at(x, y, z)
					require.Equal(t, want, got[(z*ny+y)*nx+x], "(%d,%d,%d)", x, y, z)
				}
			}
		}
	},
	"double_math": func(t *testing.T, c *corpusRun) {
		const n = 100
		x := make([]float64, n)
		for i := range x {
			x[i] = 0.01 + float64(i)*0.0193
		}
		out := c.s.zeros(t, 8*8*n)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, x)).Ptr(out).I32(n)
		c.launch(t, "dmath", d1(1), d1(128), &args)
		got := down[float64](t, c, out, 8*n)
		for i, v := range x {
			want := []float64{
				math.Sin(math.Pi*v) + 2*math.Cos(math.Pi*v), 1 / math.Hypot(v, 1.5), math.Sqrt(v*v + 5), 1 / math.Sqrt(v*v+5),
				math.Erfinv(v / 2), math.Cbrt(v) + 1/math.Sqrt(v+1), math.Exp(-v)*math.Log1p(v) + math.Pow(v, 1.5),
				float64(bits.Reverse64(uint64(i + 1))),
			}
			for k, w := range want {
				assert.InDelta(t, w, got[8*i+k], 1e-13*math.Max(1, math.Abs(w)), "function %d of %v", k, v)
			}
		}
	},
	"cg_tiles": func(t *testing.T, c *corpusRun) {
		const block, blocks = 128, 4
		in := make([]int32, block*blocks)
		for i := range in {
			in[i] = int32((i*13)%41) - 20
		}
		tiles := len(in) / 16
		sums, masks := c.s.zeros(t, 4*tiles), c.s.zeros(t, 4*tiles)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(sums).Ptr(masks)
		c.launch(t, "tile_sums", d1(blocks), d1(block), &args)
		gs, gm := down[int32](t, c, sums, tiles), down[uint32](t, c, masks, tiles)
		for k := range tiles {
			var sum int32
			var odd uint32
			for l := range 16 {
				v := in[k*16+l]
				sum += v
				if v&1 != 0 {
					odd |= 1 << l
				}
			}
			require.Equal(t, sum, gs[k], "tile %d sum", k)
			require.Equal(t, odd, gm[k], "tile %d ballot", k)
		}
	},
	"conditional_entries": func(t *testing.T, c *corpusRun) {
		_, err := c.s.p.ModuleGetFunction(c.mod, "disabled_kernel")
		require.Error(t, err, "a kernel inside #if 0 is not an entry")
		out := c.s.zeros(t, 4*8)
		var args hipsys.KernelArgs
		args.Ptr(out)
		c.launch(t, "tag", d1(1), d1(8), &args)
		tag := map[string]int32{"amd": 1, "nvidia": 2}[c.s.p.Name()]
		if tag == 0 {
			tag = 3
		}
		got := down[int32](t, c, out, 8)
		for i := range 8 {
			require.Equal(t, tag*100+int32(i), got[i])
		}
		v := up(t, c, []float32{1, 2, 3})
		args.Reset().Ptr(v).F32(2.5).I32(3)
		c.launch(t, "scale", d1(1), d1(32), &args)
		assert.Equal(t, []float32{2.5, 5, 7.5}, down[float32](t, c, v, 3))
	},
}
