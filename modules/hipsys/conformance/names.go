package conformance

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// nameExprs are the name expressions of the names source and the symbol each lowers to:
// the Itanium C++ ABI's mangling, which hiprtc's clang, NVRTC and the cpu device's C++
// compiler share.
var nameExprs = map[string]string{
	// A template's instance, which the expression instantiates.
	"scaled<float, 2>": "_Z6scaledIfLi2EEvPKT_PS0_i",
	// One instantiated explicitly.
	"scaled<int, 3>": "_Z6scaledIiLi3EEvPKT_PS0_i",
	// C++ linkage, in a namespace.
	"ops::negate": "_ZN3ops6negateEPii",
	// Overloads, told apart by a cast.
	"(void(*)(int*, int, int))fill":                   "_Z4fillPiii",
	"static_cast<void(*)(float*, float, int)>(&fill)": "_Z4fillPffi",
	// Barriers and dynamic shared memory.
	"block_sum<double>": "_Z9block_sumIdEvPKT_PS0_",
	// extern "C": its own name.
	"offset": "offset",
}

// names checks hiprtc's name expressions: added before the compile, lowered after it to
// the names ModuleGetFunction takes, and the kernels they name launched as any other.
func (s *suite) names(t *testing.T) {
	p := s.p
	prog, err := p.RTCCreateProgram(kernel("names").Source, "names.hip", nil)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.RTCDestroyProgram(prog)) }()

	_, err = p.RTCGetLoweredName(prog, "ops::negate")
	assert.ErrorIs(t, err, hipsys.RTCErrorNoLoweredNamesBeforeCompile, "before the compile")
	for e := range nameExprs {
		require.NoError(t, p.RTCAddNameExpression(prog, e), "hiprtcAddNameExpression %s", e)
	}
	require.NoError(t, p.RTCAddNameExpression(prog, "ops::negate"), "the same expression twice")
	assert.ErrorIs(t, p.RTCAddNameExpression(prog, ""), hipsys.RTCErrorInvalidInput, "an empty expression")
	if err := p.RTCCompileProgram(prog, nil); err != nil {
		log, _ := p.RTCGetProgramLog(prog)
		require.NoError(t, err, "log:\n%s", log)
	}
	assert.ErrorIs(t, p.RTCAddNameExpression(prog, "scaled<float, 4>"), hipsys.RTCErrorNoNameExpressionsAfterCompile, "after the compile")
	_, err = p.RTCGetLoweredName(prog, "scaled<float, 4>")
	assert.ErrorIs(t, err, hipsys.RTCErrorNameExpressionNotValid, "an expression never added")
	lowered := map[string]string{}
	for e, want := range nameExprs {
		got, err := p.RTCGetLoweredName(prog, e)
		require.NoError(t, err, "hiprtcGetLoweredName %s", e)
		assert.Equal(t, want, got, e)
		lowered[e] = got
	}
	code, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	m, err := p.ModuleLoadData(code)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.ModuleUnload(m)) }()
	fn := func(expr string) hipsys.Function {
		t.Helper()
		f, err := p.ModuleGetFunction(m, lowered[expr])
		require.NoError(t, err, "hipModuleGetFunction %s (%s)", lowered[expr], expr)
		return f
	}

	const n = 1000
	const block = 128
	grid := hipsys.Dim3{X: blocks(n, block), Y: 1, Z: 1}
	threads := hipsys.Dim3{X: block, Y: 1, Z: 1}
	ins, inf := make([]uint32, n), make([]float32, n)
	for i := range n {
		ins[i], inf[i] = uint32(i), float32(i)/4
	}
	in32, inF := s.upload(t, u32Bytes(ins)), s.upload(t, f32Bytes(inf))
	outI, outF := s.zeros(t, 4*n), s.zeros(t, 4*n)

	s.launch(t, fn("scaled<float, 2>"), grid, threads, 0, hipsys.NullStream, new(hipsys.KernelArgs).Ptr(inF).Ptr(outF).I32(n))
	s.launch(t, fn("scaled<int, 3>"), grid, threads, 0, hipsys.NullStream, new(hipsys.KernelArgs).Ptr(in32).Ptr(outI).I32(n))
	s.sync(t, hipsys.NullStream)
	gotF, gotI := bytesF32(s.download(t, outF, 4*n)), bytesU32(s.download(t, outI, 4*n))
	for i := range n {
		require.Equal(t, inf[i]*2, gotF[i], "scaled<float, 2> at %d", i)
		require.Equal(t, uint32(3*i), gotI[i], "scaled<int, 3> at %d", i)
	}

	s.launch(t, fn("ops::negate"), grid, threads, 0, hipsys.NullStream, new(hipsys.KernelArgs).Ptr(outI).I32(n))
	s.sync(t, hipsys.NullStream)
	gotI = bytesU32(s.download(t, outI, 4*n))
	for i := range n {
		require.Equal(t, int32(-3*i), int32(gotI[i]), "ops::negate at %d", i)
	}

	s.launch(t, fn("offset"), grid, threads, 0, hipsys.NullStream, new(hipsys.KernelArgs).Ptr(outI).I32(3*n).I32(n))
	s.sync(t, hipsys.NullStream)
	gotI = bytesU32(s.download(t, outI, 4*n))
	for i := range n {
		require.Equal(t, uint32(3*(n-i)), gotI[i], "offset at %d", i)
	}

	s.launch(t, fn("(void(*)(int*, int, int))fill"), grid, threads, 0, hipsys.NullStream, new(hipsys.KernelArgs).Ptr(outI).I32(7).I32(n))
	s.launch(t, fn("static_cast<void(*)(float*, float, int)>(&fill)"), grid, threads, 0, hipsys.NullStream, new(hipsys.KernelArgs).Ptr(outF).F32(0.5).I32(n))
	s.sync(t, hipsys.NullStream)
	gotF, gotI = bytesF32(s.download(t, outF, 4*n)), bytesU32(s.download(t, outI, 4*n))
	for i := range n {
		require.Equal(t, uint32(7+i), gotI[i], "fill(int*) at %d", i)
		require.Equal(t, 0.5+float32(i), gotF[i], "fill(float*) at %d", i)
	}

	const sumBlocks = 4
	vals := make([]byte, 8*sumBlocks*block)
	for i := range sumBlocks * block {
		binary.LittleEndian.PutUint64(vals[8*i:], math.Float64bits(float64(i)))
	}
	inD, outD := s.upload(t, vals), s.zeros(t, 8*sumBlocks)
	s.launch(t, fn("block_sum<double>"), hipsys.Dim3{X: sumBlocks, Y: 1, Z: 1}, threads, 8*block, hipsys.NullStream,
		new(hipsys.KernelArgs).Ptr(inD).Ptr(outD))
	s.sync(t, hipsys.NullStream)
	sums := bytesU64(s.download(t, outD, 8*sumBlocks))
	for b := range sumBlocks {
		want := 0.0
		for i := b * block; i < (b+1)*block; i++ {
			want += float64(i)
		}
		assert.Equal(t, want, math.Float64frombits(sums[b]), "block_sum<double> of block %d", b)
	}

	params, err := p.FuncGetParams(fn("scaled<float, 2>"))
	if !errors.Is(err, hipsys.ErrorNotSupported) {
		require.NoError(t, err)
		require.Len(t, params, 3, "scaled's parameters")
		assert.Equal(t, []uint32{0, 8, 16}, []uint32{params[0].Offset, params[1].Offset, params[2].Offset})
	}
}
