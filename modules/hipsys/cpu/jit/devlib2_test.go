package jit_test

import (
	"io"
	"math"
	"math/big"
	"math/bits"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The integer intrinsics, each against its definition in Go.
func TestDeviceIntegerIntrinsics(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
extern "C" __global__ void ints(const unsigned* a, const unsigned* b, unsigned long long* out, int n) {
	int i = threadIdx.x;
	if (i >= n) return;
	unsigned x = a[i], y = b[i];
	unsigned long long X = ((unsigned long long)x << 32) | y;
	unsigned long long* o = out + i * 20;
	o[0] = __brev(x); o[1] = __brevll(X); o[2] = __popc(x); o[3] = __popcll(X);
	o[4] = __clz((int)x); o[5] = __clzll((long long)X); o[6] = __ffs((int)x); o[7] = __ffsll((long long)X);
	o[8] = __byte_perm(x, y, 0x5140); o[9] = __funnelshift_l(x, y, y); o[10] = __funnelshift_r(x, y, y);
	o[11] = (unsigned)__mulhi((int)x, (int)y); o[12] = __umulhi(x, y); o[13] = __umul64hi(X, X + 7);
	o[14] = (unsigned)__hadd((int)x, (int)y); o[15] = __urhadd(x, y); o[16] = __usad(x, y, 3);
	o[17] = __umul24(x, y); o[18] = __fns32(x, 3, 2); o[19] = __bitextract_u32(x, y & 31, 5);
}
`
	const n = 64
	a, b, out := alloc[uint32](t, n), alloc[uint32](t, n), alloc[uint64](t, n*20)
	for k := range n {
		a.s[k] = uint32(k*2654435761) ^ uint32(k<<29)
		b.s[k] = uint32(k*40503+17) * 97
	}
	a.s[0] = 0
	var args hipsys.KernelArgs
	args.Ptr(a.dev()).Ptr(b.dev()).Ptr(out.dev()).I32(n)
	launch(t, function(t, load(t, src), "ints"), dim(1, 1, 1), dim(n, 1, 1), 0, &args)
	ffs := func(v uint64) uint64 {
		if v == 0 {
			return 0
		}
		return uint64(bits.TrailingZeros64(v) + 1)
	}
	for k := range n {
		x, y := a.s[k], b.s[k]
		X := uint64(x)<<32 | uint64(y)
		bp := func(s uint32) uint64 {
			v := uint64(y)<<32 | uint64(x)
			r := uint64(0)
			for i := range 4 {
				r |= (v >> ((s >> (4 * i) & 7) * 8) & 0xff) << (8 * i)
			}
			return r
		}
		hi, _ := bits.Mul64(X, X+7)
		fns := uint64(0xffffffff)
		for i, cnt := 3, 0; i < 32; i++ {
			if x>>i&1 == 1 {
				if cnt++; cnt == 2 {
					fns = uint64(i)
					break
				}
			}
		}
		sad := uint64(3)
		if x > y {
			sad += uint64(x - y)
		} else {
			sad += uint64(y - x)
		}
		want := []uint64{
			uint64(bits.Reverse32(x)), bits.Reverse64(X), uint64(bits.OnesCount32(x)), uint64(bits.OnesCount64(X)),
			uint64(bits.LeadingZeros32(x)), uint64(bits.LeadingZeros64(X)), ffs(uint64(x)), ffs(X),
			bp(0x5140), uint64(uint32((uint64(y)<<32 | uint64(x)) << (y & 31) >> 32)), uint64(uint32((uint64(y)<<32 | uint64(x)) >> (y & 31))),
			uint64(uint32(int64(int32(x)) * int64(int32(y)) >> 32)), uint64(uint32(uint64(x) * uint64(y) >> 32)), hi,
			uint64(uint32(int32((int64(int32(x)) + int64(int32(y))) >> 1))), (uint64(x) + uint64(y) + 1) >> 1, sad,
			uint64((x & 0xffffff) * (y & 0xffffff)), fns, uint64(x >> (y & 31) & 31),
		}
		assert.Equal(t, want, out.s[k*20:k*20+20], "x=%#x y=%#x", x, y)
	}
}

// HIP's atomic overloads, called as real code calls them: with a value of another type
// than the pointee (atomicAdd(unsigned*, int), atomicExch(int*, unsigned), ...), and in
// their system and block scopes, from every thread of several blocks at once.
func TestDeviceAtomicOverloads(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
extern "C" __global__ void atomics(int* si, unsigned* ui, unsigned long long* ull, float* f, double* d, long long* ll) {
	const unsigned one = 1;
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	atomicAdd(&ui[0], 1);            // unsigned*, int
	atomicAdd(&ull[0], 1);           // unsigned long long*, int
	atomicAdd(&si[0], one);          // int*, unsigned
	atomicSub(&ui[1], 1);
	atomicExch(&si[1], one);         // int*, unsigned
	atomicMax(&si[2], i);
	atomicMax(&ui[2], i);            // unsigned*, int
	atomicMin(&si[3], -i);
	atomicMin(&ull[1], i + 5);       // unsigned long long*, int
	atomicCAS(&si[4], 0, one);       // int*, int, unsigned
	atomicCAS(&ull[2], 0, 9);
	atomicAnd(&ui[3], ~(1u << (i % 32)));
	atomicOr(&ui[4], 1 << (i % 32));
	atomicXor(&ull[3], 1ull << (i % 64));
	atomicInc(&ui[5], 99);
	atomicDec(&ui[6], 99);
	atomicAdd(&f[0], 1);             // float*, int
	atomicAdd(&d[0], 0.5f);          // double*, float
	atomicMax(&f[1], (float)i);
	atomicMin(&d[1], -(double)i);
	atomicExch(&f[2], 2.5);
	atomicAdd(&ll[0], -2);
	atomicAdd_system(&ui[7], 2);
	atomicAdd_block(&ull[4], 3u);
	atomicMax_system(&si[5], i);
	atomicCAS_system(&si[6], 0, 5);
	atomicExch_block(&ui[8], 7);
	unsafeAtomicAdd(&f[3], 2.0f);
	atomicAddNoRet(&si[7], 1);
}
`
	const blocks, threads = 16, 128
	const total = blocks * threads
	si, ui, ull := alloc[int32](t, 8), alloc[uint32](t, 9), alloc[uint64](t, 5)
	f, d, ll := alloc[float32](t, 4), alloc[float64](t, 2), alloc[int64](t, 1)
	ui.s[1], ui.s[3], ull.s[1] = total, math.MaxUint32, math.MaxUint64
	var args hipsys.KernelArgs
	args.Ptr(si.dev()).Ptr(ui.dev()).Ptr(ull.dev()).Ptr(f.dev()).Ptr(d.dev()).Ptr(ll.dev())
	launch(t, function(t, load(t, src), "atomics"), dim(blocks, 1, 1), dim(threads, 1, 1), 0, &args)
	assert.Equal(t, []int32{total, 1, total - 1, -(total - 1), 1, total - 1, 5, total}, si.s)
	assert.Equal(t, []uint32{total, 0, total - 1, 0, math.MaxUint32, total % 100, 99 - (total-1)%100, 2 * total, 7}, ui.s)
	assert.Equal(t, []uint64{total, 5, 9, 0, 3 * total}, ull.s) // each bit flipped total/64 (even) times
	assert.Equal(t, []float32{total, total - 1, 2.5, 2 * total}, f.s)
	assert.Equal(t, []float64{0.5 * total, -(total - 1)}, d.s)
	assert.Equal(t, []int64{-2 * total}, ll.s)
}

// float16 is IEEE binary16 rounding to nearest even, for the references.
func float16(f float32) float32 {
	if f == 0 || math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		return f
	}
	e := math.Floor(math.Log2(math.Abs(float64(f))))
	if e < -14 {
		e = -14 // subnormal: the spacing of the smallest exponent
	}
	q := math.Ldexp(1, int(e)-10)
	return float32(math.RoundToEven(float64(f)/q) * q)
}

// bfloat16 keeps the top 16 bits of a float, rounding to nearest even.
func bfloat16(f float32) float32 {
	u := math.Float32bits(f)
	u += 0x7fff + (u >> 16 & 1)
	return math.Float32frombits(u &^ 0xffff)
}

// Half precision and bfloat16 from their headers: conversions, arithmetic that rounds
// at each operation, half2 lanes, math and the raw bit views.
func TestDeviceHalfAndBfloat16(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
extern "C" __global__ void halves(const float* in, float* out, unsigned short* raw, int n) {
	int i = threadIdx.x;
	if (i >= n) return;
	const float a = in[i], b = in[n + i];
	half ha = __float2half(a), hb = b;
	half2 h2 = __floats2half2_rn(a, b);
	half2 sq = h2 * h2 + __half2half2(ha);
	float* o = out + i * 12;
	o[0] = __half2float(ha);
	o[1] = ha + hb;                    // half + half is a half
	o[2] = __hmul(ha, hb);
	o[3] = __hfma(ha, hb, ha);
	o[4] = __low2float(sq);
	o[5] = __high2float(sq);
	o[6] = hsqrt(hb);
	o[7] = __hmax(ha, hb) - __hmin(ha, hb) + (__hlt(ha, hb) ? 100.0f : 0.0f);
	__hip_bfloat16 ba = __float2bfloat16(a), bb = b;
	o[8] = __bfloat162float(ba);
	o[9] = ba * bb;
	o[10] = __bfloat1622float2(__floats2bfloat162_rn(a, b)).y;
	o[11] = float(__float2half_rz(a)) - float(__float2half_ru(a));
	raw[2 * i] = __half_as_ushort(ha);
	raw[2 * i + 1] = __bfloat16_as_ushort(ba);
}
`
	const n = 64
	in, out, raw := alloc[float32](t, 2*n), alloc[float32](t, n*12), alloc[uint16](t, 2*n)
	for k := range n {
		in.s[k] = float32(k)*0.3731 - 7.1
		in.s[n+k] = float32(k)*1.17 + 0.013
	}
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(out.dev()).Ptr(raw.dev()).I32(n)
	launch(t, function(t, load(t, src), "halves"), dim(1, 1, 1), dim(n, 1, 1), 0, &args)
	h, bf := float16, bfloat16
	for k := range n {
		a, b := in.s[k], in.s[n+k]
		ha, hb := h(a), h(b)
		lt := float32(0)
		if ha < hb {
			lt = 100
		}
		// The directed conversions, at binary16's 11 significant bits (every a here is a
		// normal half).
		exact := new(big.Float).SetFloat64(float64(a))
		rz, ru := float32(rounded(exact, 11, big.ToZero)), float32(rounded(exact, 11, big.ToPositiveInf))
		want := []float32{
			ha, h(ha + hb), h(ha * hb), h(float32(math.FMA(float64(ha), float64(hb), float64(ha)))),
			h(h(ha*ha) + ha), h(h(hb*hb) + ha), h(float32(math.Sqrt(float64(hb)))), h(max(ha, hb)-min(ha, hb)) + lt,
			bf(a), bf(bf(a) * bf(b)), bf(b), rz - ru,
		}
		assert.Equal(t, want, out.s[k*12:k*12+12], "a=%v b=%v", a, b)
		assert.Equal(t, math.Float32bits(bf(a))>>16, uint32(raw.s[2*k+1]), "a=%v", a)
	}
}

// Device printf: every line of a launch reaches standard output, formatted as C's
// printf formats it, before the launch returns.
func TestDevicePrintf(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
extern "C" __global__ void hello(const float* v) {
	printf("block %d thread %u value %.2f %s\n", blockIdx.x, threadIdx.x, v[threadIdx.x], "ok");
}
`
	v := alloc[float32](t, 4)
	copy(v.s, []float32{0.5, 1.25, 2, 3.75})
	f := function(t, load(t, src), "hello")
	got := captureStdout(t, func() {
		var args hipsys.KernelArgs
		args.Ptr(v.dev())
		launch(t, f, dim(3, 1, 1), dim(4, 1, 1), 0, &args)
	})
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	require.Len(t, lines, 12, got)
	want := map[string]bool{}
	for b := range 3 {
		for th, val := range []string{"0.50", "1.25", "2.00", "3.75"} {
			want["block "+string(rune('0'+b))+" thread "+string(rune('0'+th))+" value "+val+" ok"] = true
		}
	}
	for _, l := range lines {
		assert.True(t, want[l], "unexpected line %q", l)
		delete(want, l)
	}
	assert.Empty(t, want)
}

// captureStdout runs fn with file descriptor 1 (what kernels print to) redirected to a
// pipe and returns what was written.
func captureStdout(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved, err := syscall.Dup(1)
	require.NoError(t, err)
	require.NoError(t, syscall.Dup2(int(w.Fd()), 1))
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	fn()
	require.NoError(t, syscall.Dup2(saved, 1))
	syscall.Close(saved)
	w.Close()
	return <-done
}
