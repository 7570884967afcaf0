package jit_test

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// mathCase is one function of HIP's math API: the C expression (of x and y, both in
// (0, 1) for x and (1.3, 7.6) for y) and its reference in Go.
type mathCase struct {
	expr string
	ref  func(x, y float64) float64
	tol  float64 // relative; 0 = exact
}

func besselI(order int, x float64) float64 {
	term := 1.0
	if order == 1 {
		term = x / 2
	}
	sum := term
	for k := 1; k < 200; k++ {
		term *= x * x / 4 / (float64(k) * float64(k+order))
		sum += term
	}
	return sum
}

// rounded is the exact value v rounded to prec bits in mode (the _rz/_rd/_ru intrinsics).
func rounded(v *big.Float, prec uint, mode big.RoundingMode) float64 {
	f, _ := new(big.Float).SetMode(mode).SetPrec(prec).Set(v).Float64()
	return f
}

func exactOp(x, y float64, op byte) *big.Float {
	a, b := new(big.Float).SetPrec(2000).SetFloat64(x), new(big.Float).SetPrec(2000).SetFloat64(y)
	switch op {
	case '+':
		return a.Add(a, b)
	case '*':
		return a.Mul(a, b)
	case '/':
		return a.Quo(a, b)
	}
	return a.Sub(a, b)
}

// mathCases covers HIP's float and double math: %s stands for the float suffix ("f" or
// ""), so one table checks both precisions.
var mathCases = []mathCase{
	{"acos%s(x)", func(x, y float64) float64 { return math.Acos(x) }, 1},
	{"acosh%s(y)", func(x, y float64) float64 { return math.Acosh(y) }, 1},
	{"asin%s(x)", func(x, y float64) float64 { return math.Asin(x) }, 1},
	{"asinh%s(x)", func(x, y float64) float64 { return math.Asinh(x) }, 1},
	{"atan%s(x)", func(x, y float64) float64 { return math.Atan(x) }, 1},
	{"atan2%s(x, y)", func(x, y float64) float64 { return math.Atan2(x, y) }, 1},
	{"atanh%s(x)", func(x, y float64) float64 { return math.Atanh(x) }, 1},
	{"cbrt%s(y)", func(x, y float64) float64 { return math.Cbrt(y) }, 1},
	{"ceil%s(y)", func(x, y float64) float64 { return math.Ceil(y) }, 0},
	{"copysign%s(y, -x)", func(x, y float64) float64 { return -y }, 0},
	{"cos%s(y)", func(x, y float64) float64 { return math.Cos(y) }, 1},
	{"cosh%s(x)", func(x, y float64) float64 { return math.Cosh(x) }, 1},
	{"cospi%s(x)", func(x, y float64) float64 { return math.Cos(math.Pi * x) }, 2},
	{"cospi%s(y - x + 0.5)", nil, 0}, // filled in below: exact at half-integers
	{"cyl_bessel_i0%s(y)", func(x, y float64) float64 { return besselI(0, y) }, 4},
	{"cyl_bessel_i1%s(y)", func(x, y float64) float64 { return besselI(1, y) }, 4},
	{"erf%s(x)", func(x, y float64) float64 { return math.Erf(x) }, 1},
	{"erfc%s(x)", func(x, y float64) float64 { return math.Erfc(x) }, 1},
	{"erfcinv%s(x)", func(x, y float64) float64 { return math.Erfcinv(x) }, 4},
	{"erfcx%s(x)", func(x, y float64) float64 { return math.Exp(x*x) * math.Erfc(x) }, 4},
	{"erfinv%s(x)", func(x, y float64) float64 { return math.Erfinv(x) }, 4},
	{"exp%s(y)", func(x, y float64) float64 { return math.Exp(y) }, 1},
	{"exp10%s(x)", func(x, y float64) float64 { return math.Pow(10, x) }, 2},
	{"exp2%s(y)", func(x, y float64) float64 { return math.Exp2(y) }, 1},
	{"expm1%s(x)", func(x, y float64) float64 { return math.Expm1(x) }, 1},
	{"fabs%s(-y)", func(x, y float64) float64 { return y }, 0},
	{"fdim%s(y, x)", func(x, y float64) float64 { return math.Dim(y, x) }, 1},
	{"floor%s(y)", func(x, y float64) float64 { return math.Floor(y) }, 0},
	{"fma%s(x, y, x)", func(x, y float64) float64 { return math.FMA(x, y, x) }, 1},
	{"fmax%s(x, y)", func(x, y float64) float64 { return math.Max(x, y) }, 0},
	{"fmin%s(x, y)", func(x, y float64) float64 { return math.Min(x, y) }, 0},
	{"fmod%s(y, x)", func(x, y float64) float64 { return math.Mod(y, x) }, 1},
	{"hypot%s(x, y)", func(x, y float64) float64 { return math.Hypot(x, y) }, 1},
	{"ilogb%s(y)", func(x, y float64) float64 { return float64(math.Ilogb(y)) }, 0},
	{"j0%s(y)", func(x, y float64) float64 { return math.J0(y) }, 1e4},
	{"j1%s(y)", func(x, y float64) float64 { return math.J1(y) }, 1e4},
	{"jn%s(2, y)", func(x, y float64) float64 { return math.Jn(2, y) }, 1e4},
	{"ldexp%s(y, 3)", func(x, y float64) float64 { return math.Ldexp(y, 3) }, 0},
	{"lgamma%s(y)", func(x, y float64) float64 { v, _ := math.Lgamma(y); return v }, 1e3},
	{"llrint%s(y)", func(x, y float64) float64 { return math.RoundToEven(y) }, 0},
	{"llround%s(y)", func(x, y float64) float64 { return math.Round(y) }, 0},
	{"log%s(y)", func(x, y float64) float64 { return math.Log(y) }, 1},
	{"log10%s(y)", func(x, y float64) float64 { return math.Log10(y) }, 1},
	{"log1p%s(x)", func(x, y float64) float64 { return math.Log1p(x) }, 1},
	{"log2%s(y)", func(x, y float64) float64 { return math.Log2(y) }, 1},
	{"logb%s(y)", func(x, y float64) float64 { return math.Logb(y) }, 0},
	{"lrint%s(y)", func(x, y float64) float64 { return math.RoundToEven(y) }, 0},
	{"lround%s(y)", func(x, y float64) float64 { return math.Round(y) }, 0},
	{"nearbyint%s(y)", func(x, y float64) float64 { return math.RoundToEven(y) }, 0},
	{"norm3d%s(x, y, x)", func(x, y float64) float64 { return math.Sqrt(2*x*x + y*y) }, 1},
	{"norm4d%s(x, y, x, y)", func(x, y float64) float64 { return math.Sqrt(2*x*x + 2*y*y) }, 1},
	{"normcdf%s(y - 4)", func(x, y float64) float64 { return 0.5 * math.Erfc(-(y-4)/math.Sqrt2) }, 4},
	{"normcdfinv%s(x)", func(x, y float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*x) }, 8},
	{"pow%s(y, x)", func(x, y float64) float64 { return math.Pow(y, x) }, 1},
	{"rcbrt%s(y)", func(x, y float64) float64 { return 1 / math.Cbrt(y) }, 1},
	{"remainder%s(y, x)", func(x, y float64) float64 { return math.Remainder(y, x) }, 1},
	{"rhypot%s(x, y)", func(x, y float64) float64 { return 1 / math.Hypot(x, y) }, 1},
	{"rint%s(y)", func(x, y float64) float64 { return math.RoundToEven(y) }, 0},
	{"rnorm3d%s(x, y, x)", func(x, y float64) float64 { return 1 / math.Sqrt(2*x*x+y*y) }, 1},
	{"rnorm4d%s(x, y, x, y)", func(x, y float64) float64 { return 1 / math.Sqrt(2*x*x+2*y*y) }, 1},
	{"round%s(y)", func(x, y float64) float64 { return math.Round(y) }, 0},
	{"rsqrt%s(y)", func(x, y float64) float64 { return 1 / math.Sqrt(y) }, 1},
	{"scalbn%s(y, 2)", func(x, y float64) float64 { return 4 * y }, 0},
	{"scalbln%s(y, 2)", func(x, y float64) float64 { return 4 * y }, 0},
	{"sin%s(y)", func(x, y float64) float64 { return math.Sin(y) }, 1},
	{"sinh%s(x)", func(x, y float64) float64 { return math.Sinh(x) }, 1},
	{"sinpi%s(x)", func(x, y float64) float64 { return math.Sin(math.Pi * x) }, 2},
	{"sqrt%s(y)", func(x, y float64) float64 { return math.Sqrt(y) }, 0.5},
	{"tan%s(x)", func(x, y float64) float64 { return math.Tan(x) }, 1},
	{"tanh%s(x)", func(x, y float64) float64 { return math.Tanh(x) }, 1},
	{"tgamma%s(y)", func(x, y float64) float64 { return math.Gamma(y) }, 8},
	{"trunc%s(y)", func(x, y float64) float64 { return math.Trunc(y) }, 0},
	{"y0%s(y)", func(x, y float64) float64 { return math.Y0(y) }, 1e4},
	{"y1%s(y)", func(x, y float64) float64 { return math.Y1(y) }, 1e4},
	{"yn%s(2, y)", func(x, y float64) float64 { return math.Yn(2, y) }, 1e4},
	{"({ R s, c; sincos%s(y, &s, &c); s + 3 * c; })", func(x, y float64) float64 { return math.Sin(y) + 3*math.Cos(y) }, 2},
	{"({ R s, c; sincospi%s(x, &s, &c); s + 3 * c; })", func(x, y float64) float64 { return math.Sin(math.Pi*x) + 3*math.Cos(math.Pi*x) }, 4},
	{"({ R v[3] = {x, y, x}; norm%s(3, v); })", func(x, y float64) float64 { return math.Sqrt(2*x*x + y*y) }, 1},
	{"({ R v[3] = {x, y, x}; rnorm%s(3, v); })", func(x, y float64) float64 { return 1 / math.Sqrt(2*x*x+y*y) }, 1},
	{"({ int q; R r = remquo%s(y, x, &q); r + 1000 * (q & 7); })", func(x, y float64) float64 {
		r := math.Remainder(y, x)
		q := int(math.RoundToEven((y - r) / x))
		return r + 1000*float64(q&7)
	}, 1},
	{"({ R i; R f = modf%s(y, &i); f + 100 * i; })", func(x, y float64) float64 { i, f := math.Modf(y); return f + 100*i }, 1},
	{"({ int e; R m = frexp%s(y, &e); m + 100 * e; })", func(x, y float64) float64 { m, e := math.Frexp(y); return m + 100*float64(e) }, 0},
	{"nextafter%s(y, 0)", nil, 0}, // filled in below: the precision's own next value
	{"(R)(sizeof(sqrt(x)) + sizeof(fabs(x)) + sizeof(pow(x, y)))", nil, 0},
	{"(R)(isnan(x / 0 * 0) + 2 * isinf(y / 0) + 4 * isfinite(y) + 8 * signbit(-x))", func(x, y float64) float64 { return 15 }, 0},
}

// floatIntrinsics are the float-only intrinsics, rounding modes included.
var floatIntrinsics = []mathCase{
	{"__expf(x)", func(x, y float64) float64 { return math.Exp(x) }, 2},
	{"__exp10f(x)", func(x, y float64) float64 { return math.Pow(10, x) }, 2},
	{"__logf(y)", func(x, y float64) float64 { return math.Log(y) }, 2},
	{"__log2f(y)", func(x, y float64) float64 { return math.Log2(y) }, 2},
	{"__log10f(y)", func(x, y float64) float64 { return math.Log10(y) }, 2},
	{"__sinf(y)", func(x, y float64) float64 { return math.Sin(y) }, 2},
	{"__cosf(y)", func(x, y float64) float64 { return math.Cos(y) }, 2},
	{"__tanf(x)", func(x, y float64) float64 { return math.Tan(x) }, 2},
	{"__powf(y, x)", func(x, y float64) float64 { return math.Pow(y, x) }, 2},
	{"({ float s, c; __sincosf(y, &s, &c); s + 3 * c; })", func(x, y float64) float64 { return math.Sin(y) + 3*math.Cos(y) }, 4},
	{"__fdividef(x, y)", func(x, y float64) float64 { return x / y }, 1},
	{"fdividef(x, y)", func(x, y float64) float64 { return x / y }, 1},
	{"__saturatef(y - 4)", func(x, y float64) float64 { return math.Max(0, math.Min(1, float64(float32(y-4)))) }, 1},
	{"__frsqrt_rn(y)", func(x, y float64) float64 { return 1 / math.Sqrt(y) }, 1},
	{"__fmaf_rn(x, y, x)", func(x, y float64) float64 { return math.FMA(x, y, x) }, 0.5},
}

// directed lists the intrinsics with a rounding mode in their name; each is checked
// exactly against big.Float in that mode.
var directed = []struct {
	name string
	op   byte
}{{"add", '+'}, {"sub", '-'}, {"mul", '*'}, {"div", '/'}}

var modes = map[string]big.RoundingMode{"rn": big.ToNearestEven, "rz": big.ToZero, "rd": big.ToNegativeInf, "ru": big.ToPositiveInf}

func TestDeviceMathAPI(t *testing.T) {
	const n = 64
	xs := func(k int) float64 { return 0.05 + float64(k)*0.9/(n-1) }
	ys := func(k int) float64 { return 1.3 + float64(k)*0.1 }
	for _, prec := range []struct {
		name, suffix, typ string
		ulp               float64
		bits              uint
	}{{"float", "f", "float", 0x1p-23, 24}, {"double", "", "double", 0x1p-52, 53}} {
		t.Run(prec.name, func(t *testing.T) {
			var exprs []string
			var refs []func(x, y float64) float64
			var tols []float64
			round := func(v float64) float64 {
				if prec.bits == 24 {
					return float64(float32(v))
				}
				return v
			}
			for _, c := range mathCases {
				e := strings.ReplaceAll(strings.ReplaceAll(c.expr, "%s", prec.suffix), "R ", prec.typ+" ")
				e = strings.ReplaceAll(e, "(R)", "("+prec.typ+")")
				ref := c.ref
				switch {
				case strings.HasPrefix(c.expr, "cospi%s(y - x + 0.5)"):
					// x + (y - x + 0.5) is rounded; the reference rounds it the same way.
					ref = func(x, y float64) float64 { return 0 }
					e = fmt.Sprintf("cospi%s(R(0.5) + R(int(y)))", prec.suffix)
					e = strings.ReplaceAll(e, "R(", prec.typ+"(")
				case strings.HasPrefix(c.expr, "nextafter"):
					if prec.bits == 24 {
						ref = func(x, y float64) float64 { return float64(math.Nextafter32(float32(y), 0)) }
					} else {
						ref = func(x, y float64) float64 { return math.Nextafter(y, 0) }
					}
				case strings.HasPrefix(c.expr, "(R)(sizeof"):
					size := float64(prec.bits/8 + 1) // 4 for float, 8 for double: the type is kept
					if prec.bits == 24 {
						size = 4
					} else {
						size = 8
					}
					ref = func(x, y float64) float64 { return 3 * size }
				}
				exprs, refs, tols = append(exprs, e), append(refs, ref), append(tols, c.tol)
			}
			if prec.bits == 24 {
				for _, c := range floatIntrinsics {
					exprs, refs, tols = append(exprs, c.expr), append(refs, c.ref), append(tols, c.tol)
				}
			}
			for _, d := range directed {
				for _, m := range []string{"rn", "rz", "rd", "ru"} {
					name := "__f" + d.name + "_" + m
					if prec.bits == 53 {
						name = "__d" + d.name + "_" + m
					}
					exprs = append(exprs, name+"(x, y)")
					op, mode, p := d.op, modes[m], prec.bits
					refs = append(refs, func(x, y float64) float64 { return rounded(exactOp(x, y, op), p, mode) })
					tols = append(tols, 0)
				}
			}
			if prec.bits == 24 {
				for _, m := range []string{"rn", "rz", "rd", "ru"} {
					mode := modes[m]
					exprs = append(exprs, "__frcp_"+m+"(y)", "__fsqrt_"+m+"(y)", "__fmaf_"+m+"(x, y, y)")
					refs = append(refs,
						func(x, y float64) float64 { return rounded(exactOp(1, y, '/'), 24, mode) },
						func(x, y float64) float64 {
							return rounded(new(big.Float).SetPrec(200).Sqrt(new(big.Float).SetPrec(200).SetFloat64(y)), 24, mode)
						},
						func(x, y float64) float64 { return rounded(exactOp(x*y, y, '+'), 24, mode) }) // x*y is exact in a double
					tols = append(tols, 0, 0, 0)
				}
			}
			var src strings.Builder
			fmt.Fprintf(&src, "#include <hip/hip_runtime.h>\nextern \"C\" __global__ void table(const %[1]s* xs, const %[1]s* ys, %[1]s* out, int n) {\n"+
				"\tint i = threadIdx.x;\n\tif (i >= n) return;\n\tconst %[1]s x = xs[i], y = ys[i];\n", prec.typ)
			for j, e := range exprs {
				fmt.Fprintf(&src, "\tout[%d * n + i] = %s;\n", j, e)
			}
			src.WriteString("}\n")
			m := load(t, src.String())
			x, y, out := alloc[float64](t, n), alloc[float64](t, n), alloc[float64](t, n*len(exprs))
			if prec.bits == 24 {
				x32, y32, out32 := alloc[float32](t, n), alloc[float32](t, n), alloc[float32](t, n*len(exprs))
				for k := range n {
					x32.s[k], y32.s[k] = float32(xs(k)), float32(ys(k))
				}
				var args hipsys.KernelArgs
				args.Ptr(x32.dev()).Ptr(y32.dev()).Ptr(out32.dev()).I32(n)
				launch(t, function(t, m, "table"), dim(1, 1, 1), dim(n, 1, 1), 0, &args)
				for k := range n {
					x.s[k], y.s[k] = float64(x32.s[k]), float64(y32.s[k])
				}
				for k := range out.s {
					out.s[k] = float64(out32.s[k])
				}
			} else {
				for k := range n {
					x.s[k], y.s[k] = xs(k), ys(k)
				}
				var args hipsys.KernelArgs
				args.Ptr(x.dev()).Ptr(y.dev()).Ptr(out.dev()).I32(n)
				launch(t, function(t, m, "table"), dim(1, 1, 1), dim(n, 1, 1), 0, &args)
			}
			for j, e := range exprs {
				for k := range n {
					want := round(refs[j](x.s[k], y.s[k]))
					got := out.s[j*n+k]
					// Go's own functions are within a few units of the last place too, and a
					// sum of two functions cancels: tolerances are ulps of max(|want|, 0.5).
					tol := 0.0
					if tols[j] > 0 {
						tol = (tols[j] + 2) * prec.ulp * math.Max(math.Abs(want), 0.5)
					}
					if !assert.InDelta(t, want, got, tol, "%s at x=%v y=%v", e, x.s[k], y.s[k]) {
						break
					}
				}
			}
		})
	}
}
