package conformance

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// layoutRow is what HIP's headers give one type of the layout kernel (kernels/layout.hip):
// its size and alignment, and for a struct the offset of its member b. nvAlign, when not
// zero, is CUDA's alignment where it differs from AMD's: CUDA's vector_types.h caps the
// 4-component types at 16 bytes, AMD's amd_hip_vector_types.h aligns them to their whole
// size; the structs that hold one differ with it (nvSize, nvOffset).
type layoutRow struct {
	name                      string
	size, align, offset       uint64
	nvAlign, nvSize, nvOffset uint64
}

// layoutTable is in the order of layout.hip's TYPE lines. The rule it follows (checked
// against AMD's real headers by compiling LayoutAsserts): 1- and 3-component types have
// one component's alignment, 2- and 4-component types their whole size's (CUDA: at most
// 16). The cpu device follows AMD.
var layoutTable = []layoutRow{
	{name: "char1", size: 1, align: 1}, {name: "char2", size: 2, align: 2},
	{name: "char3", size: 3, align: 1}, {name: "char4", size: 4, align: 4},
	{name: "uchar1", size: 1, align: 1}, {name: "uchar2", size: 2, align: 2},
	{name: "uchar3", size: 3, align: 1}, {name: "uchar4", size: 4, align: 4},
	{name: "short1", size: 2, align: 2}, {name: "short2", size: 4, align: 4},
	{name: "short3", size: 6, align: 2}, {name: "short4", size: 8, align: 8},
	{name: "ushort1", size: 2, align: 2}, {name: "ushort2", size: 4, align: 4},
	{name: "ushort3", size: 6, align: 2}, {name: "ushort4", size: 8, align: 8},
	{name: "int1", size: 4, align: 4}, {name: "int2", size: 8, align: 8},
	{name: "int3", size: 12, align: 4}, {name: "int4", size: 16, align: 16},
	{name: "uint1", size: 4, align: 4}, {name: "uint2", size: 8, align: 8},
	{name: "uint3", size: 12, align: 4}, {name: "uint4", size: 16, align: 16},
	{name: "long1", size: 8, align: 8}, {name: "long2", size: 16, align: 16},
	{name: "long3", size: 24, align: 8}, {name: "long4", size: 32, align: 32, nvAlign: 16},
	{name: "ulong1", size: 8, align: 8}, {name: "ulong2", size: 16, align: 16},
	{name: "ulong3", size: 24, align: 8}, {name: "ulong4", size: 32, align: 32, nvAlign: 16},
	{name: "longlong1", size: 8, align: 8}, {name: "longlong2", size: 16, align: 16},
	{name: "longlong3", size: 24, align: 8}, {name: "longlong4", size: 32, align: 32, nvAlign: 16},
	{name: "ulonglong1", size: 8, align: 8}, {name: "ulonglong2", size: 16, align: 16},
	{name: "ulonglong3", size: 24, align: 8}, {name: "ulonglong4", size: 32, align: 32, nvAlign: 16},
	{name: "float1", size: 4, align: 4}, {name: "float2", size: 8, align: 8},
	{name: "float3", size: 12, align: 4}, {name: "float4", size: 16, align: 16},
	{name: "double1", size: 8, align: 8}, {name: "double2", size: 16, align: 16},
	{name: "double3", size: 24, align: 8}, {name: "double4", size: 32, align: 32, nvAlign: 16},
	{name: "IntUint2", size: 16, align: 8, offset: 8},
	{name: "CharShort2", size: 8, align: 4, offset: 4},
	{name: "CharFloat3", size: 16, align: 4, offset: 4},
	{name: "CharFloat4", size: 32, align: 16, offset: 16},
	{name: "FloatDouble2", size: 32, align: 16, offset: 16},
	{name: "CharDouble3", size: 32, align: 8, offset: 8},
	{name: "CharDouble4", size: 64, align: 32, offset: 32, nvAlign: 16, nvSize: 48, nvOffset: 16},
}

// want is the row's size, alignment and member offset on platform.
func (r layoutRow) want(platform string) (size, align, offset uint64) {
	size, align, offset = r.size, r.align, r.offset
	if platform == "nvidia" {
		if r.nvAlign != 0 {
			align = r.nvAlign
		}
		if r.nvSize != 0 {
			size = r.nvSize
		}
		if r.nvOffset != 0 {
			offset = r.nvOffset
		}
	}
	return size, align, offset
}

// isStruct is whether the row is one of layout.hip's structs, which also report a member's
// offset (their names start with an upper-case letter; HIP's types do not).
func (r layoutRow) isStruct() bool { return r.name[0] >= 'A' && r.name[0] <= 'Z' }

// layoutLineRE finds the TYPE and FIELD uses of layout.hip, in order.
var layoutLineRE = regexp.MustCompile(`\b(TYPE|FIELD)\((\w+)`)

// layoutExprs is what layout.hip writes, slot by slot, read from its source; the table
// must name the same types in the same order.
func layoutExprs() []string {
	var out []string
	_, body, _ := strings.Cut(kernel("layout").Source, " layout(") // past the macros' definitions
	for _, m := range layoutLineRE.FindAllStringSubmatch(body, -1) {
		if m[1] == "TYPE" {
			out = append(out, "sizeof("+m[2]+")", "alignof("+m[2]+")")
		} else {
			out = append(out, "offsetof("+m[2]+", b)")
		}
	}
	return out
}

// layoutWant is the table as the slots layout.hip writes, for platform.
func layoutWant(platform string) (exprs []string, want []uint64) {
	for _, r := range layoutTable {
		size, align, offset := r.want(platform)
		exprs = append(exprs, "sizeof("+r.name+")", "alignof("+r.name+")")
		want = append(want, size, align)
		if r.isStruct() {
			exprs = append(exprs, "offsetof("+r.name+", b)")
			want = append(want, offset)
		}
	}
	return exprs, want
}

// LayoutAsserts is the layout kernel's source followed by a static_assert of every value
// of the suite's table for platform ("amd", "nvidia", "cpu"): compiling it holds the table
// to a platform's headers without running anything, as on a machine with AMD's hiprtc
// and no GPU.
func LayoutAsserts(platform string) string {
	var b strings.Builder
	b.WriteString(kernel("layout").Source)
	b.WriteString("\n// The suite's table (layout.go).\n")
	exprs, want := layoutWant(platform)
	for i, e := range exprs {
		// offsetof is the compiler's builtin: NVRTC has no <cstddef> to define it.
		e = strings.Replace(e, "offsetof(", "__builtin_offsetof(", 1)
		fmt.Fprintf(&b, "static_assert(%s == %d, \"%s is %d\");\n", e, want[i], exprs[i], want[i])
	}
	return b.String()
}

// types holds the platform's kernels to the types HIP's headers define: the layout of
// the vector types and of structs holding them (layoutTable), and AMD's short unsigned
// type names, which every platform accepts.
func (s *suite) types(t *testing.T) {
	t.Run("layout", func(t *testing.T) {
		exprs, want := layoutWant(s.p.Name())
		require.Equal(t, layoutExprs(), exprs, "layout.hip and the table name the same types in the same order")
		out := s.zeros(t, 8*len(want))
		s.launch(t, s.function(t, "layout", "layout"), dim(1, 1), dim(1, 1), 0, hipsys.NullStream,
			new(hipsys.KernelArgs).Ptr(out))
		got := bytesU64(s.download(t, out, 8*len(want)))
		for i := range want {
			assert.Equal(t, want[i], got[i], "%s", exprs[i])
		}
	})
	t.Run("short type names", func(t *testing.T) {
		const n = 200
		out := s.zeros(t, 4*n)
		s.launch(t, s.function(t, "typenames", "short_names"), dim(blocks(n, 64), 1), dim(64, 1), 0, hipsys.NullStream,
			new(hipsys.KernelArgs).Ptr(out).U32(n))
		got := bytesU32(s.download(t, out, 4*n))
		for i := range uint32(n) {
			want := i*3 + uint32(uint8(i+255)) + uint32(uint16(i+65535)) + i + i
			if !assert.Equal(t, want, got[i], "out[%d]", i) {
				return
			}
		}
	})
}
