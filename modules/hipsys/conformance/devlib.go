package conformance

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The device library's constructs that real HIP and CUDA code uses, each in a corpus
// source of its own and checked against what the HIP and CUDA programming guides say it
// does.
var deviceLibraryChecks = map[string]func(t *testing.T, c *corpusRun){
	"shared_type_first": func(t *testing.T, c *corpusRun) {
		const block, n = 64, 64*3 - 5
		in := make([]float32, n)
		for i := range in {
			in[i] = float32(i) + 0.5
		}
		out := c.s.zeros(t, 4*n)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(out).I32(n)
		c.s.launch(t, c.fn(t, "reverse_blocks"), d1((n+block-1)/block), d1(block), 4*block, 0, &args)
		got := down[float32](t, c, out, n)
		for j := range n {
			b, k := j/block, j%block
			src := b*block + block - 1 - k // the thread that wrote element j read in[src]
			want := float32(0)
			if src < n {
				want = in[src]
			}
			require.Equal(t, want, got[j], "element %d", j)
		}

		const m = 96
		u := make([]uint32, 2*m)
		for i := range u {
			u[i] = uint32(i * 3)
		}
		dout := c.s.zeros(t, 4*2*m)
		args.Reset().Ptr(up(t, c, u)).Ptr(dout)
		c.s.launch(t, c.fn(t, "rotate_left"), d1(2), d1(m), 4*m, 0, &args)
		gotU := down[uint32](t, c, dout, 2*m)
		for b := range 2 {
			for k := range m {
				require.Equal(t, u[b*m+(k+1)%m], gotU[b*m+k], "block %d thread %d", b, k)
			}
		}
	},
	"c_headers": func(t *testing.T, c *corpusRun) {
		const n = 40
		in := make([]float32, n)
		for i := range in {
			in[i] = float32(i) * 0.75
		}
		f, d, l := c.s.zeros(t, 4*(8+n)), c.s.zeros(t, 8*(8+n)), c.s.zeros(t, 8*14)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(f).Ptr(d).Ptr(l).I32(n).I32(0)
		c.launch(t, "c_library", d1(1), d1(64), &args)
		gf, gd, gl := down[float32](t, c, f, 8+n), down[float64](t, c, d, 8+n), down[int64](t, c, l, 14)
		inf := float32(math.Inf(1))
		assert.Equal(t, []float32{math.MaxFloat32, math.Float32frombits(0x00800000), 0x1p-23, inf, inf}, gf[:5], "FLT_MAX, FLT_MIN, FLT_EPSILON, HUGE_VALF, INFINITY")
		assert.Equal(t, []float64{math.MaxFloat64, math.Float64frombits(0x0010000000000000), 0x1p-52, math.Pi, math.Sqrt2}, gd[:5], "DBL_MAX, DBL_MIN, DBL_EPSILON, M_PI, M_SQRT2")
		assert.Equal(t, []int64{math.MaxInt32, math.MinInt32, math.MaxUint32, 8, math.MaxInt64, math.MinInt16, math.MinInt8,
			math.MaxUint16, math.MinInt64, 24 + 53, 8, 24, 1 + 2 + 4, 7}, gl, "integer limits, offsetof, sizes, classification, strlen+memcmp")
		for i := range n {
			x := in[i]
			s := float32(math.Sqrt(float64(x)))
			want := s + s + x + max(x, 2) + float32(i)
			assert.InEpsilon(t, want, gf[8+i], 1e-6, "float math of element %d", i)
			assert.Equal(t, math.Floor(float64(x)*math.Pi)+math.Ldexp(1, i%8), gd[8+i], "double math of element %d", i)
		}
	},
	"placement_new": func(t *testing.T, c *corpusRun) {
		const blocks, block = 5, 64
		in := make([]float32, blocks*block)
		for i := range in {
			in[i] = float32(i%9) - 3
		}
		sums, counts := c.s.zeros(t, 4*blocks), c.s.zeros(t, 4*blocks)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(sums).Ptr(counts)
		c.launch(t, "block_sums", d1(blocks), d1(block), &args)
		gs, gc := down[float32](t, c, sums, blocks), down[int32](t, c, counts, blocks)
		for b := range blocks {
			want := float32(100)
			for k := range block {
				want += in[b*block+k]
			}
			assert.Equal(t, want, gs[b], "block %d: the constructor's 100 plus the block's values", b)
			assert.Equal(t, int32(block+1), gc[b], "block %d: count", b)
		}
		raw := c.s.zeros(t, 4*8)
		args.Reset().Ptr(raw)
		c.launch(t, "cells_in_place", d1(1), d1(32), &args)
		assert.Equal(t, []int32{7, -7, 7, -7, 7, 42, 7, -7}, down[int32](t, c, raw, 8), "four Cells constructed in place")
	},
	"bf16_pairs": func(t *testing.T, c *corpusRun) {
		nan, negZero := float32(math.NaN()), float32(math.Copysign(0, -1))
		// Pairs whose rounding is known (ties go to the even neighbour) and pairs to compare
		// them with: both lanes differ, one lane equal, a NaN in one lane, both equal.
		a := []float32{1 + 0x1p-8, 1 + 3*0x1p-8, -1.5, 3.1415927, 65504, 0x1p-130, 1e30, negZero, 2, 7}
		b := []float32{1, 1 + 3*0x1p-8, -1.5, 2.5, nan, 5, 1e30, 1, 3, 8}
		const n = 5 // pairs: (a[2k], a[2k+1]) against (b[2k], b[2k+1])
		bits, ne := c.s.zeros(t, 2*2*n), c.s.zeros(t, 4*n)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, a)).Ptr(up(t, c, b)).Ptr(bits).Ptr(ne).I32(n)
		c.launch(t, "bf16_round_compare", d1(1), d1(32), &args)
		gotBits, gotNe := down[uint16](t, c, bits, 2*n), down[int32](t, c, ne, n)
		for k, f := range a {
			assert.Equal(t, bf16Bits(f), gotBits[k], "__float22bfloat162_rn lane of %v", f)
		}
		for k := range n {
			x0, x1 := bf16Value(bf16Bits(a[2*k])), bf16Value(bf16Bits(a[2*k+1]))
			y0, y1 := bf16Value(bf16Bits(b[2*k])), bf16Value(bf16Bits(b[2*k+1]))
			// Ordered not-equal, lane by lane: false for a NaN.
			want := int32(0)
			if (x0 < y0 || x0 > y0) && (x1 < y1 || x1 > y1) {
				want = 1
			}
			assert.Equal(t, want, gotNe[k], "__hbne2 of pair %d", k)
		}
		assert.Equal(t, []int32{0, 0, 0, 0, 1}, gotNe, "__hbne2: only the last pair differs in both lanes")

		const m = 120
		in := make([]float32, 2*m)
		var lo, hi, low float32
		for i := range m {
			in[2*i], in[2*i+1] = float32(i%2), float32(i%3) // every partial sum an integer under 256: exact
			lo, hi = lo+in[2*i], hi+in[2*i+1]
		}
		low = lo
		sums := c.s.zeros(t, 8)
		args.Reset().Ptr(up(t, c, in)).Ptr(sums).Ptr(sums + 4).I32(m)
		c.launch(t, "bf16_accumulate", d1((m+63)/64), d1(64), &args)
		got := down[uint16](t, c, sums, 4)
		assert.Equal(t, []uint16{bf16Bits(lo), bf16Bits(hi), 0, bf16Bits(low)}, got, "atomicAdd on a pair, and on the high half of a word")
	},
	"block_votes": func(t *testing.T, c *corpusRun) {
		const blocks, block, rounds = 4, 96, 3
		in := make([]int32, blocks*block)
		for i := range in {
			in[i] = int32(i*37%60) + 1 // 1..60
		}
		in[1*block+5] = 50 // block 1: some thread equals 50 (round 0's "any")
		in[2*block+7] = 52 // block 2: round 2's
		for k := range block {
			in[3*block+k] = 60 // block 3: every value above every round's bound
		}
		out := c.s.zeros(t, 4*3*blocks*block)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(out).I32(rounds)
		c.launch(t, "block_votes", d1(blocks), d1(block), &args)
		got := down[int32](t, c, out, 3*blocks*block)
		for b := range blocks {
			var counts, alls, anys int32
			for r := range int32(rounds) {
				var count, all, anyv int32 = 0, 1, 0
				for k := range block {
					v := in[b*block+k]
					if v%(r+2) == 0 {
						count++
					}
					if v <= r {
						all = 0
					}
					if v == 50+r {
						anyv = 1
					}
				}
				counts, alls, anys = counts*1000+count, alls*2+all, anys*2+anyv
			}
			for k := range block {
				i := b*block + k
				require.Equal(t, []int32{counts, alls, anys}, got[3*i:3*i+3], "block %d thread %d: count, and, or over %d rounds", b, k, rounds)
			}
		}
	},
	"cg_coalesced": func(t *testing.T, c *corpusRun) {
		W := c.s.props.WarpSize
		const n = 300 // the last warp is partial
		g := lcg(9)
		in := make([]int32, n)
		for i := range in {
			in[i] = int32(g.next()%21) - 10
		}
		out, counter, shapes := c.s.zeros(t, 4*n), c.s.zeros(t, 4), c.s.zeros(t, 4*n)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(out).Ptr(counter).Ptr(shapes).I32(n)
		c.launch(t, "compact_positive_cg", d1((n+127)/128), d1(128), &args)
		count := down[int32](t, c, counter, 1)[0]
		gotShapes := down[int32](t, c, shapes, n)
		var kept []int32
		for w := 0; w*W < n; w++ {
			lo, hi := w*W, min((w+1)*W, n)
			size := int32(0)
			for _, v := range in[lo:hi] {
				if v > 0 {
					size++
				}
			}
			rank := int32(0)
			for i := lo; i < hi; i++ {
				if in[i] > 0 {
					// rank among the warp's kept lanes, their number; one group of one.
					require.Equal(t, rank+100*size+100000, gotShapes[i], "lane %d of warp %d", i-lo, w)
					rank++
					kept = append(kept, in[i])
				}
			}
		}
		require.Equal(t, int32(len(kept)), count, "slots reserved")
		got := down[int32](t, c, out, len(kept))
		assert.ElementsMatch(t, kept, got, "every positive value in a slot of its own")

		const blocks, block = 3, 64
		vals := make([]int32, blocks*block)
		for i := range vals {
			vals[i] = int32(g.next() % 50)
		}
		for k := range 32 {
			vals[block+k] = 2 * int32(k) // block 1's first tile: all even, one side
		}
		sums, shapes2 := c.s.zeros(t, 4*blocks*block), c.s.zeros(t, 4*blocks*block)
		args.Reset().Ptr(up(t, c, vals)).Ptr(sums).Ptr(shapes2)
		c.launch(t, "partition_sums", d1(blocks), d1(block), &args)
		gotSums, gotShapes2 := down[int32](t, c, sums, blocks*block), down[int32](t, c, shapes2, blocks*block)
		for tile := 0; tile < blocks*block/32; tile++ {
			var sum [2]int32
			var size [2]int32
			for _, v := range vals[tile*32 : tile*32+32] {
				sum[v&1] += v
				size[v&1]++
			}
			split := size[0] > 0 && size[1] > 0
			var rank [2]int32
			for k := range 32 {
				i := tile*32 + k
				side := vals[i] & 1 // 0: the even side, whose predicate holds
				wantShape := rank[side] + 100*size[side] + 100000
				if split {
					wantShape = rank[side] + 100*size[side] + 10000*(1-side) + 200000
				}
				require.Equal(t, wantShape, gotShapes2[i], "tile %d lane %d: rank, size, meta rank and size", tile, k)
				wantSum := int32(-1)
				if rank[side] == 0 {
					wantSum = sum[side]
				}
				require.Equal(t, wantSum, gotSums[i], "tile %d lane %d: its side's sum at rank 0", tile, k)
				rank[side]++
			}
		}
	},
	"grid_constant": func(t *testing.T, c *corpusRun) {
		const n = 200
		coef := []float32{0.5, -2, 0.25, 1}
		poly := make([]byte, 20)
		for k, v := range coef {
			binary.LittleEndian.PutUint32(poly[4*k:], math.Float32bits(v))
		}
		binary.LittleEndian.PutUint32(poly[16:], 4)
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i-100) / 16
		}
		y := c.s.zeros(t, 4*n)
		var args hipsys.KernelArgs
		args.Raw(poly, 4).Ptr(up(t, c, x)).Ptr(y).I32(n)
		c.launch(t, "poly_eval", d1((n+63)/64), d1(64), &args)
		got := down[float32](t, c, y, n)
		for i, v := range x {
			want := float32(0)
			for k := 3; k >= 0; k-- {
				want = want*v + coef[k]
			}
			require.InDelta(t, want, got[i], 1e-4*max(1, float64(abs32(want))), "p(%v)", v) // a GPU may fuse the multiply-adds
		}
	},
	"half_shuffle": func(t *testing.T, c *corpusRun) {
		W := c.s.props.WarpSize
		const block, blocks = 128, 2
		n := block * blocks
		in := make([]uint16, n)
		vals := make([]float32, n)
		for i := range in {
			vals[i] = float32(i%16) / 4 // small quarters: every partial sum exact in half
			in[i] = f16bits(vals[i])
		}
		sums, out := c.s.zeros(t, 4*n/W), c.s.zeros(t, 2*3*n)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(sums).Ptr(out)
		c.launch(t, "half_shuffles", d1(blocks), d1(block), &args)
		gotSums, got := down[uint16](t, c, sums, 2*n/W), down[uint16](t, c, out, 3*n)
		for w := 0; w < n/W; w++ {
			var sum float32
			for _, v := range vals[w*W : (w+1)*W] {
				sum += v
			}
			assert.Equal(t, []uint16{f16bits(sum), f16bits(float32(W))}, gotSums[2*w:2*w+2], "warp %d: the pairs' butterfly sum", w)
		}
		for i := range n {
			lane, seg := i%W, i%16
			up, dn := i, i
			if seg >= 1 {
				up = i - 1
			}
			if seg+2 < 16 {
				dn = i + 2
			}
			assert.Equal(t, []uint16{in[i-lane], in[up], in[dn]}, got[3*i:3*i+3], "thread %d: lane 0's, the one below's, two above's", i)
		}
	},
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// bf16Bits rounds f to bfloat16 (the top 16 bits of a float32) to nearest, ties to even;
// a NaN stays a quiet NaN.
func bf16Bits(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	lower := u & 0xffff
	r := u >> 16
	if lower > 0x8000 || lower == 0x8000 && r&1 == 1 {
		r++
	}
	return uint16(r)
}

func bf16Value(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }
