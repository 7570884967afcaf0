package jit_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestVectorAdd(t *testing.T) {
	f := function(t, load(t, basicSource), "vadd")
	for _, n := range []int{1, 255, 256, 100_000} {
		a, b, c := alloc[float32](t, n), alloc[float32](t, n), alloc[float32](t, n)
		for i := range n {
			a.s[i], b.s[i] = float32(i), float32(2*i)
		}
		var args hipsys.KernelArgs
		args.Ptr(a.dev()).Ptr(b.dev()).Ptr(c.dev()).U64(uint64(n))
		launch(t, f, dim(uint32((n+255)/256), 1, 1), dim(256, 1, 1), 0, &args)
		for i := range n {
			if c.s[i] != float32(3*i) {
				require.Equal(t, float32(3*i), c.s[i], "n=%d i=%d", n, i)
			}
		}
	}
}

func TestSaxpyByValueScalars(t *testing.T) {
	f := function(t, load(t, basicSource), "saxpy")
	const n = 1000
	x, y := alloc[float32](t, n), alloc[float32](t, n)
	for i := range n {
		x.s[i], y.s[i] = float32(i), 1
	}
	var args hipsys.KernelArgs
	args.F32(2.5).Ptr(x.dev()).Ptr(y.dev()).I32(n - 10) // the last 10 stay untouched
	launch(t, f, dim(4, 1, 1), dim(256, 1, 1), 0, &args)
	for i := range n {
		want := float32(1)
		if i < n-10 {
			want = 2.5*float32(i) + 1
		}
		assert.Equal(t, want, y.s[i], "i=%d", i)
	}
}

func TestGrid2DOfBlocks2D(t *testing.T) {
	f := function(t, load(t, basicSource), "grid2d")
	for _, tc := range []struct {
		name string
		w, h int
	}{
		{"inline", 50, 30},
		// Over the pool: block ranges start and end inside a row of blocks.
		{"pool", 1000, 700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, h := tc.w, tc.h
			out := alloc[uint32](t, w*h)
			var args hipsys.KernelArgs
			args.Ptr(out.dev()).I32(int32(w)).I32(int32(h))
			launch(t, f, dim(uint32(w+15)/16, uint32(h+7)/8, 1), dim(16, 8, 1), 0, &args)
			for y := range h {
				for x := range w {
					want := uint32(y/8)<<24 | uint32(x/16)<<16 | uint32(y%8)<<8 | uint32(x%16)
					require.Equal(t, want, out.s[y*w+x], "x=%d y=%d", x, y)
				}
			}
		})
	}
}

func TestGrid3DOfBlocks3D(t *testing.T) {
	f := function(t, load(t, basicSource), "grid3d")
	block := dim(4, 4, 2)
	for _, tc := range []struct {
		name string
		grid hipsys.Dim3
	}{
		{"inline", dim(5, 4, 3)},
		// Over the pool: block ranges start and end inside rows and planes of blocks.
		{"pool", dim(7, 5, 4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.grid
			out := alloc[uint32](t, int(g.Count()*block.Count()))
			var args hipsys.KernelArgs
			launch(t, f, g, block, 0, args.Ptr(out.dev()))
			i := 0
			for bz := range g.Z {
				for by := range g.Y {
					for bx := range g.X {
						for tz := range block.Z {
							for ty := range block.Y {
								for tx := range block.X {
									want := bz<<24 | by<<16 | bx<<8 | tz<<4 | ty<<2 | tx
									require.Equal(t, want, out.s[i], "block (%d,%d,%d) thread (%d,%d,%d)", bx, by, bz, tx, ty, tz)
									i++
								}
							}
						}
					}
				}
			}
		})
	}
}

// The runner loops over a block's threads by the int index when it cannot wrap and over
// threadIdx.x otherwise; both must give every thread the index a GPU would.
func TestIndexWrapsPastIntMax(t *testing.T) {
	f := function(t, load(t, basicSource), "wrap_index")
	const block = 1000
	const grid = (1<<31+block-1)/block + 1 // block grid-2 straddles INT_MAX
	out, tid := alloc[int32](t, 3*block), alloc[uint32](t, 3*block)
	var args hipsys.KernelArgs
	launch(t, f, dim(grid, 1, 1), dim(block, 1, 1), 0, args.Ptr(out.dev()).Ptr(tid.dev()))
	for k := range 3 * block {
		b, x := uint32(grid-3+k/block), uint32(k%block)
		require.Equal(t, int32(b*block+x), out.s[k], "block %d thread %d", b, x)
		require.Equal(t, x, tid.s[k], "block %d thread %d", b, x)
	}
}

func TestAtomicHistogramAcrossBlocks(t *testing.T) {
	f := function(t, load(t, basicSource), "histogram")
	const n = 1 << 20 // 4096 blocks: the pool's workers all take part
	in, bins := alloc[uint8](t, n), alloc[uint32](t, 256)
	want := make([]uint32, 256)
	for i := range n {
		v := uint8((i * 7919) >> 3)
		in.s[i] = v
		want[v]++
	}
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(bins.dev()).I32(n)
	launch(t, f, dim(n/256, 1, 1), dim(256, 1, 1), 0, &args)
	assert.Equal(t, want, bins.s)
}

func TestAtomicOperationsEveryType(t *testing.T) {
	f := function(t, load(t, basicSource), "atomics")
	si, ui := alloc[int32](t, 7), alloc[uint32](t, 6)
	ul, fl, d := alloc[uint64](t, 2), alloc[float32](t, 2), alloc[float64](t, 2)
	si.s[6] = -1
	ui.s[2] = math.MaxUint32
	var args hipsys.KernelArgs
	args.Ptr(si.dev()).Ptr(ui.dev()).Ptr(ul.dev()).Ptr(fl.dev()).Ptr(d.dev())
	const blocks, threads = 64, 128
	const total = blocks * threads
	launch(t, f, dim(blocks, 1, 1), dim(threads, 1, 1), 0, &args)
	assert.Equal(t, []int32{2 * total, -total, total - 1, -(total - 1), math.MaxInt32, 0, -1 << 31}, si.s)
	assert.Equal(t, []uint32{total, total - 1, 0, total % 10, 7, total}, ui.s)
	assert.Equal(t, []uint64{3 * total, total - 1}, ul.s)
	assert.Equal(t, []float32{0.5 * total, total - 1}, fl.s)
	assert.Equal(t, []float64{0.25 * total, -(total - 1)}, d.s)
}

func TestDeviceHelpersAndTemplates(t *testing.T) {
	f := function(t, load(t, basicSource), "helpers")
	const n = 40
	fo, io, do := alloc[float32](t, n), alloc[int32](t, n), alloc[float64](t, n)
	var args hipsys.KernelArgs
	args.Ptr(fo.dev()).Ptr(io.dev()).Ptr(do.dev()).I32(n)
	launch(t, f, dim(1, 1, 1), dim(64, 1, 1), 0, &args)
	for k := range n {
		assert.Equal(t, float32(4*k*k), fo.s[k])
		assert.Equal(t, int32(2*k+min(k, 3)+max(k, 2)), io.s[k])
		assert.Equal(t, 0.5*float64(k), do.s[k])
	}
}

func TestMathFunctionsMatchGo(t *testing.T) {
	m := load(t, basicSource)
	const n = 64
	ref := []func(x float64) float64{
		math.Sqrt, math.Exp, math.Log, math.Sin, math.Cos,
		func(x float64) float64 { return math.Pow(x, 1.5) }, math.Abs,
		func(x float64) float64 { return math.Min(x, 1) }, func(x float64) float64 { return math.Max(x, 1) },
		func(x float64) float64 { return 1 / math.Sqrt(x) }, math.Exp, func(x float64) float64 { return x / 3 },
		func(x float64) float64 { return math.Floor(x * 3.3) }, func(x float64) float64 { return math.Ceil(x * 3.3) },
		math.Tanh, func(x float64) float64 { return x*2 + 1 },
	}
	input := func(k int) float64 { return 0.1 + float64(k)*0.37 }

	t.Run("float", func(t *testing.T) {
		in, out := alloc[float32](t, n), alloc[float32](t, n*len(ref))
		for k := range n {
			in.s[k] = float32(input(k))
		}
		var args hipsys.KernelArgs
		args.Ptr(in.dev()).Ptr(out.dev()).I32(n)
		launch(t, function(t, m, "mathf"), dim(1, 1, 1), dim(n, 1, 1), 0, &args)
		for fi, fn := range ref {
			for k := range n {
				want := fn(float64(in.s[k]))
				if fi == 12 || fi == 13 { // floor/ceil of the float product, not the double one
					want = fn(float64(in.s[k])) // same unless x*3.3 rounds across an integer
					want = float64(float32(want))
				}
				assert.InDelta(t, want, float64(out.s[fi*n+k]), 2e-6*math.Max(1, math.Abs(want))+boundary(fi), "function %d x=%v", fi, in.s[k])
			}
		}
	})
	t.Run("double", func(t *testing.T) {
		in, out := alloc[float64](t, n), alloc[float64](t, n*len(ref))
		for k := range n {
			in.s[k] = input(k)
		}
		var args hipsys.KernelArgs
		args.Ptr(in.dev()).Ptr(out.dev()).I32(n)
		launch(t, function(t, m, "mathd"), dim(1, 1, 1), dim(n, 1, 1), 0, &args)
		for fi, fn := range ref {
			for k := range n {
				want := fn(in.s[k])
				assert.InDelta(t, want, out.s[fi*n+k], 1e-12*math.Max(1, math.Abs(want)), "function %d x=%v", fi, in.s[k])
			}
		}
	})
}

// boundary allows floor/ceil of a float product to land one off from the double one.
func boundary(fi int) float64 {
	if fi == 12 || fi == 13 {
		return 1
	}
	return 0
}

func TestSharedMemoryReductionWithBarrier(t *testing.T) {
	f := function(t, load(t, barrierSource), "reduce")
	const blocks, n = 100, 100*256 - 17
	in, out := alloc[float32](t, n), alloc[float32](t, blocks)
	for i := range n {
		in.s[i] = float32(i % 7)
	}
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(out.dev()).I32(n)
	launch(t, f, dim(blocks, 1, 1), dim(256, 1, 1), 0, &args)
	for b := range blocks {
		var want float32
		for i := b * 256; i < min(n, (b+1)*256); i++ {
			want += in.s[i]
		}
		assert.Equal(t, want, out.s[b], "block %d", b)
	}
}

func TestDynamicSharedMemory(t *testing.T) {
	m := load(t, barrierSource)
	t.Run("block scope", func(t *testing.T) {
		for _, block := range []uint32{1, 64, 1024} {
			const blocks = 8
			n := int(block) * blocks
			in, out := alloc[int32](t, n), alloc[int32](t, n)
			for i := range n {
				in.s[i] = int32(i)
			}
			var args hipsys.KernelArgs
			args.Ptr(in.dev()).Ptr(out.dev())
			launch(t, function(t, m, "reverse"), dim(blocks, 1, 1), dim(block, 1, 1), block*4, &args)
			for i := range n {
				b, k := i/int(block), i%int(block)
				require.Equal(t, int32(b*int(block)+int(block)-1-k), out.s[i], "block size %d i=%d", block, i)
			}
		}
	})
	t.Run("namespace scope", func(t *testing.T) {
		const w, d = 64, 16
		in, out := alloc[float32](t, w*w), alloc[float32](t, w*w)
		for i := range w * w {
			in.s[i] = float32(i)
		}
		var args hipsys.KernelArgs
		args.Ptr(in.dev()).Ptr(out.dev()).I32(w)
		launch(t, function(t, m, "transpose_tile"), dim(w/d, w/d, 1), dim(d, d, 1), d*d*4, &args)
		for y := range w {
			for x := range w {
				require.Equal(t, in.s[x*w+y], out.s[y*w+x], "x=%d y=%d", x, y)
			}
		}
	})
}

func TestByValueParametersArePerThread(t *testing.T) {
	f := function(t, load(t, basicSource), "private_params")
	out := alloc[int32](t, 64)
	for i := range out.s {
		out.s[i] = -1
	}
	var args hipsys.KernelArgs
	args.Ptr(out.dev()).I32(100).I32(40)
	launch(t, f, dim(1, 1, 1), dim(64, 1, 1), 0, &args)
	for i := range 64 {
		want := int32(-1)
		if i < 40 {
			want = int32(100 + i)
		}
		assert.Equal(t, want, out.s[i], "thread %d", i)
	}
}

func TestIndexVariablesInDeviceFunctions(t *testing.T) {
	m := load(t, deviceIndexSource)
	const blocks, threads = 9, 64
	out, rows := alloc[uint32](t, blocks*threads), alloc[uint32](t, blocks*threads)
	var args hipsys.KernelArgs
	launch(t, function(t, m, "ids"), dim(blocks, 1, 1), dim(threads, 1, 1), 0, args.Ptr(out.dev()).Ptr(rows.dev()))
	for i := range blocks * threads {
		assert.Equal(t, uint32(i), out.s[i])
		assert.Equal(t, uint32(blocks*1000), rows.s[i])
	}

	// Fibers: each thread reads its own index again after the barrier.
	launch(t, function(t, m, "ids_barrier"), dim(blocks, 1, 1), dim(threads, 1, 1), 0, args.Reset().Ptr(out.dev()))
	for i := range blocks * threads {
		b, k := i/threads, i%threads
		assert.Equal(t, uint32(b*threads+threads-1-k), out.s[i], "i=%d", i)
	}
}
