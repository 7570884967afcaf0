package compute_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

// The failure case table, end to end through the Server on
// the cpu platform, with faults injected where the real device would fail.

func TestCaseWrite(t *testing.T) {
	e := newEnv(t)
	a, b := e.empty(0, 2), e.empty(0, 2)
	// The first copy fails; the second is still attempted.
	e.f.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorInvalidValue)
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(a, 8), Data: f32bytes(1, 2)}, {Desc: compute.Linear(b, 8), Data: f32bytes(3, 4)}}, 0).Wait()
	_, err := e.read(1, a, 2) // from another stream: the store is server-wide
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue, "a failed write leaves its destination carrying the failure")
	assert.Equal(t, []float32{3, 4}, e.mustRead(0, b, 2), "every descriptor is attempted")
	// A later successful write heals the destination.
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(a, 8), Data: f32bytes(5, 6)}}, 0).Wait()
	assert.Equal(t, []float32{5, 6}, e.mustRead(0, a, 2))
}

func TestCaseWriteOutOfBoundsAndStrides(t *testing.T) {
	e := newEnv(t)
	a := e.empty(0, 2)
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(a, 12), Data: f32bytes(1, 2, 3)}}, 0).Wait()
	assert.ErrorIs(t, e.srv.Check([]compute.Binding{a}, 0), compute.ErrOutOfBounds)
	bad := compute.CopyDescriptor{Binding: a, Shape: []int{2}, Strides: []int{2}, ElemSize: 4}
	_ = e.srv.Write([]compute.WriteOp{{Desc: bad, Data: f32bytes(1, 2)}}, 0).Wait()
	assert.ErrorIs(t, e.srv.Check([]compute.Binding{a}, 0), compute.ErrUnsupportedStrides)
	_, err := e.srv.Read([]compute.CopyDescriptor{{Binding: a, Shape: []int{2}, Strides: []int{1, 1}, ElemSize: 4}}, 0).Wait()
	assert.ErrorIs(t, err, compute.ErrUnsupportedStrides, "a malformed descriptor is an error, never a panic")
}

const brokenSource = `extern "C" __global__ void broken(float* out) { this is not C++; }`

func TestCaseCompileFailure(t *testing.T) {
	for _, mode := range []compute.LaunchMode{compute.Execute, compute.DryRun} {
		name := map[compute.LaunchMode]string{compute.Execute: "execute", compute.DryRun: "dry-run"}[mode]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			in, out := e.floats(0, 1, 2), e.empty(0, 2)
			k := compute.NewKernel(brokenSource, "broken", hipsys.Dim3{X: 1, Y: 1, Z: 1}, []compute.Access{compute.Read, compute.Write})
			tok, err := e.srv.StartProfile(0)
			require.NoError(t, err)
			err = e.srv.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{in, out}}, 0, mode)
			if mode == compute.DryRun {
				require.NoError(t, err, "a dry run fails nothing")
			} else {
				require.ErrorIs(t, err, compute.ErrCompilation, "the launch reports it")
			}
			assert.NoError(t, e.srv.Check([]compute.Binding{in}, 0), "inputs never carry a compile failure")
			_, perr := e.srv.EndProfile(0, tok)
			assert.ErrorIs(t, perr, compute.ErrProfileInvalidated)
			err = e.srv.Check([]compute.Binding{out}, 0)
			if mode == compute.DryRun {
				assert.NoError(t, err, "a dry run claims nothing")
				return
			}
			var ce *compute.CompileError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, compute.ErrCompilation)
			assert.NotEmpty(t, ce.Log)
			assert.Contains(t, err.Error(), "failed to compile ("+ce.Compiler+"):\n")
			assert.Equal(t, brokenSource, ce.Source)
		})
	}
}

// Both compile tests need a kernel no earlier test compiled: a cold environment, so that
// they pass however many times the suite runs in one process.
func TestCaseCompileInjectedAndRetried(t *testing.T) {
	e := newColdEnv(t)
	in, out := e.floats(0, 1, 2), e.empty(0, 2)
	k := compute.NewKernel(kernelSource+"\n// retried\n", "add_one", addOne.Block, addOne.IO)
	e.f.FailNext("hiprtcCompileProgram", 1, hipsys.RTCErrorCompilation)
	err := e.srv.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{in, out}, Scalars: []compute.Scalar{compute.U32(2)}}, 0, compute.Execute)
	assert.ErrorIs(t, err, compute.ErrCompilation)
	assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 0), compute.ErrCompilation)
	// No negative cache: the next launch compiles again, and heals the output.
	launch(t, e.srv, k, 2, 0, in, out)
	assert.Equal(t, []float32{2, 3}, e.mustRead(0, out, 2))
}

func TestCaseDryRun(t *testing.T) {
	e := newColdEnv(t)
	in, out := e.floats(0, 1, 2), e.empty(0, 2)
	e.f.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorInvalidValue)
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(out, 8), Data: f32bytes(0, 0)}}, 0).Wait()
	require.Error(t, e.srv.Check([]compute.Binding{out}, 0))
	k := compute.NewKernel(kernelSource+"\n// dry\n", "add_one", addOne.Block, addOne.IO)
	compiles, launches := e.f.Calls("hiprtcCompileProgram"), e.f.Calls("hipModuleLaunchKernel")
	require.NoError(t, e.srv.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{in, out}, Scalars: []compute.Scalar{compute.U32(2)}}, 0, compute.DryRun))
	assert.Equal(t, compiles+1, e.f.Calls("hiprtcCompileProgram"), "a dry run compiles")
	assert.Equal(t, launches, e.f.Calls("hipModuleLaunchKernel"), "and launches nothing")
	assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 0), hipsys.ErrorInvalidValue, "a dry run touches no claim")
	// The compile is memoized: the executing launch after it compiles nothing.
	launch(t, e.srv, k, 2, 0, in, out)
	assert.Equal(t, compiles+1, e.f.Calls("hiprtcCompileProgram"))
	assert.Equal(t, []float32{2, 3}, e.mustRead(0, out, 2))
}

func TestCaseDryRunLeavesLazyMemoryUnmapped(t *testing.T) {
	e := newEnv(t)
	st, err := e.srv.Streams().Stream(0)
	require.NoError(t, err)
	st.GPU.SetDryRun(true)
	out := e.empty(0, 1<<20) // a new page, recorded but not allocated
	st.GPU.SetDryRun(false)
	mallocs := e.f.Calls("hipMalloc")
	require.NoError(t, e.srv.Launch(fill, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{out}, Scalars: []compute.Scalar{compute.F32(1), compute.U32(4)}}, 0, compute.DryRun))
	assert.Equal(t, mallocs, e.f.Calls("hipMalloc"), "a dry run maps nothing")
	require.NoError(t, e.srv.Launch(fill, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{out}, Scalars: []compute.Scalar{compute.F32(1), compute.U32(4)}}, 0, compute.Execute))
	assert.Equal(t, mallocs+1, e.f.Calls("hipMalloc"), "the executing launch maps the page")
	assert.Equal(t, []float32{1, 1, 1, 1}, e.mustRead(0, out, 4))
}

func u32bytes(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return b
}

func TestCaseDynamicCount(t *testing.T) {
	e := newEnv(t)
	in := e.floats(0, 1, 2, 3, 4)
	args := func(out compute.Binding) *compute.Args {
		return &compute.Args{Buffers: []compute.Binding{in, out}, Scalars: []compute.Scalar{compute.U32(4)}}
	}
	t.Run("reads the grid", func(t *testing.T) {
		out := e.empty(0, 4)
		h, err := e.srv.Create(u32bytes(1, 1, 1), 0)
		require.NoError(t, err)
		count := e.keep(h)
		require.NoError(t, e.srv.Launch(addOne, compute.Dynamic(count), args(out), 0, compute.Execute))
		assert.Equal(t, []float32{2, 3, 4, 5}, e.mustRead(0, out, 4))
	})
	t.Run("zero count launches nothing", func(t *testing.T) {
		out := e.floats(0, 7, 8, 0, 0)
		h, err := e.srv.Create(u32bytes(0, 0, 0), 0)
		require.NoError(t, err)
		count := e.keep(h)
		launches := e.f.Calls("hipModuleLaunchKernel")
		require.NoError(t, e.srv.Launch(addOne, compute.Dynamic(count), args(out), 0, compute.Execute))
		assert.Equal(t, launches, e.f.Calls("hipModuleLaunchKernel"))
		assert.Equal(t, []float32{7, 8, 0, 0}, e.mustRead(0, out, 4))
	})
	t.Run("zero count leaves claims as they were", func(t *testing.T) {
		out := e.empty(0, 4)
		e.f.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorInvalidValue)
		_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(out, 16), Data: make([]byte, 16)}}, 0).Wait()
		require.NoError(t, e.srv.Launch(addOne, compute.Static(0, 1, 1), args(out), 0, compute.Execute))
		assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 0), hipsys.ErrorInvalidValue)
	})
	t.Run("count buffer carrying a failure", func(t *testing.T) {
		out := e.empty(0, 4)
		count := e.empty(0, 3)
		e.f.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorInvalidValue)
		_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(count, 12), Data: u32bytes(1, 1, 1)}}, 0).Wait()
		require.NoError(t, e.srv.Launch(addOne, compute.Dynamic(count), args(out), 0, compute.Execute))
		err := e.srv.Check([]compute.Binding{out}, 0)
		assert.ErrorIs(t, err, compute.ErrDynamicCount)
		assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)
		assert.NoError(t, e.srv.Check([]compute.Binding{in}, 0))
	})
	t.Run("readback fails", func(t *testing.T) {
		out := e.empty(0, 4)
		h, err := e.srv.Create(u32bytes(1, 1, 1), 0)
		require.NoError(t, err)
		count := e.keep(h)
		e.f.FailNext("hipMemcpyDtoHAsync", 1, hipsys.ErrorIllegalAddress)
		require.NoError(t, e.srv.Launch(addOne, compute.Dynamic(count), args(out), 0, compute.Execute))
		assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 0), hipsys.ErrorIllegalAddress)
	})
	t.Run("short count buffer", func(t *testing.T) {
		out := e.empty(0, 4)
		count := e.floats(0, 1) // 4 bytes, not 12
		require.NoError(t, e.srv.Launch(addOne, compute.Dynamic(count), args(out), 0, compute.Execute))
		assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 0), compute.ErrDynamicCount)
	})
}

func TestCaseTaintedInput(t *testing.T) {
	e := newEnv(t)
	in, out := e.empty(0, 2), e.floats(0, 9, 9)
	e.f.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorInvalidValue)
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(in, 8), Data: f32bytes(1, 2)}}, 0).Wait()
	launches := e.f.Calls("hipModuleLaunchKernel")
	launch(t, e.srv, addOne, 2, 1, in, out) // on another stream
	assert.Equal(t, launches, e.f.Calls("hipModuleLaunchKernel"), "the launch is skipped")
	assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 0), hipsys.ErrorInvalidValue, "outputs inherit the input's failure")
}

func TestCaseLaunchFailures(t *testing.T) {
	cases := []struct {
		name  string
		arm   func(e *env)
		args  func(e *env, in, out compute.Binding) *compute.Args
		k     *compute.Kernel
		match error
	}{
		{
			name:  "hipModuleLaunchKernel",
			arm:   func(e *env) { e.f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure) },
			match: hipsys.ErrorLaunchFailure,
		},
		{
			name: "info upload",
			arm:  func(e *env) { e.f.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorInvalidValue) },
			args: func(e *env, in, out compute.Binding) *compute.Args {
				return &compute.Args{Buffers: []compute.Binding{in, out}, Info: []uint64{2, 99}}
			},
			k:     addOneInfo,
			match: hipsys.ErrorInvalidValue,
		},
		{
			name: "resource resolution",
			arm:  func(e *env) {},
			args: func(e *env, in, out compute.Binding) *compute.Args {
				// An output that never got memory: its lookup fails inside the scope.
				h, err := e.srv.NewHandle(8, 0)
				require.NoError(e.t, err)
				return &compute.Args{Buffers: []compute.Binding{in, e.keep(h)}, Scalars: []compute.Scalar{compute.U32(2)}}
			},
			match: memory.ErrNotFound,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			in, out := e.floats(0, 1, 2), e.floats(0, 0, 0)
			k := addOne
			if c.k != nil {
				k = c.k
			}
			args := &compute.Args{Buffers: []compute.Binding{in, out}, Scalars: []compute.Scalar{compute.U32(2)}}
			if c.args != nil {
				args = c.args(e, in, out)
			}
			// Warm the kernel so the fault hits the launch, not the compile's uploads.
			require.NoError(t, e.srv.Launch(k, compute.Static(1, 1, 1), args, 0, compute.DryRun))
			c.arm(e)
			require.NoError(t, e.srv.Launch(k, compute.Static(1, 1, 1), args, 0, compute.Execute))
			assert.ErrorIs(t, e.srv.Check(args.Buffers[1:], 0), c.match, "outputs carry the failure")
			assert.NoError(t, e.srv.Check([]compute.Binding{in}, 0), "inputs do not")
			e.f.Reset()
			if c.name == "resource resolution" {
				return
			}
			// The next successful launch releases the outputs.
			require.NoError(t, e.srv.Launch(k, compute.Static(1, 1, 1), args, 0, compute.Execute))
			assert.Equal(t, []float32{2, 3}, e.mustRead(0, out, 2))
		})
	}
}

func TestCaseMalformedLaunch(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2), e.floats(0, 0, 0)
	assert.ErrorIs(t, e.srv.Launch(nil, compute.Static(1, 1, 1), &compute.Args{}, 0, compute.Execute), compute.ErrInvalidArgument)
	err := e.srv.Launch(addOne, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{in}}, 0, compute.Execute)
	assert.ErrorIs(t, err, compute.ErrInvalidArgument)
	assert.NoError(t, e.srv.Check([]compute.Binding{in}, 0), "a declared input carries no failure")
	err = e.srv.Launch(addOne, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{in, out, out}}, 0, compute.Execute)
	assert.ErrorIs(t, err, compute.ErrInvalidArgument)
	assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 0), compute.ErrInvalidArgument)
}

func TestCaseFailureSurfaces(t *testing.T) {
	e := newEnv(t)
	out := e.empty(0, 2)
	e.f.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorInvalidValue)
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(out, 8), Data: f32bytes(1, 2)}}, 0).Wait()
	for id := compute.StreamID(0); id < 2; id++ {
		_, err := e.read(id, out, 2)
		assert.ErrorIs(t, err, hipsys.ErrorInvalidValue, "read")
		assert.ErrorIs(t, e.srv.Sync([]compute.Binding{out}, id).Wait(), hipsys.ErrorInvalidValue, "sync")
		assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, id), hipsys.ErrorInvalidValue, "check")
		_, err = e.srv.GetResource(out, id)
		assert.ErrorIs(t, err, hipsys.ErrorInvalidValue, "get_resource")
		assert.NoError(t, e.srv.Flush(id), "flush never fails")
	}
	assert.NoError(t, e.srv.Sync(nil, 0).Wait(), "the stream itself carries nothing")
}

func TestCaseEndCaptureRefused(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2), e.empty(0, 2)
	launch(t, e.srv, addOne, 2, 0, in, out)
	require.NoError(t, e.srv.GraphPrepare(0))
	launch(t, e.srv, addOne, 2, 0, in, out)
	require.NoError(t, e.srv.BeginCapture(0))
	launch(t, e.srv, addOne, 2, 0, in, out)
	e.f.FailNext("hipGraphInstantiate", 1, hipsys.ErrorOutOfMemory)
	_, err := e.srv.EndCapture(0)
	require.ErrorIs(t, err, hipsys.ErrorOutOfMemory)
	_, rerr := e.read(1, out, 2)
	assert.ErrorIs(t, rerr, hipsys.ErrorOutOfMemory, "the recorded outputs carry the refusal")
	assert.NoError(t, e.srv.Check([]compute.Binding{in}, 0))
	// The stream can capture again.
	require.NoError(t, e.srv.GraphPrepare(0))
	launch(t, e.srv, addOne, 2, 0, in, out)
	require.NoError(t, e.srv.BeginCapture(0))
	launch(t, e.srv, addOne, 2, 0, in, out)
	g, err := e.srv.EndCapture(0)
	require.NoError(t, err)
	require.NoError(t, e.srv.Replay(g, 0))
	assert.Equal(t, []float32{2, 3}, e.mustRead(0, out, 2))
	e.srv.GraphDestroy(g, 0)
}

func TestCaseReplayAndDestroy(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2), e.empty(0, 2)
	g := capture(t, e, func() { launch(t, e.srv, addOne, 2, 0, in, out) })
	e.f.FailNext("hipGraphLaunch", 1, hipsys.ErrorLaunchFailure)
	assert.ErrorIs(t, e.srv.Replay(g, 0), hipsys.ErrorLaunchFailure)
	assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 1), hipsys.ErrorLaunchFailure)
	require.NoError(t, e.srv.Replay(g, 0), "the next replay settles the set")
	assert.Equal(t, []float32{2, 3}, e.mustRead(0, out, 2))
	assert.ErrorIs(t, e.srv.Replay(g+1000, 0), stream.ErrUnknownGraph)

	// A failed wait at destroy fails the graph's write set only.
	other := e.floats(0, 5, 5)
	require.NoError(t, e.srv.Replay(g, 0))
	e.f.FailNext("hipStreamSynchronize", 1, hipsys.ErrorIllegalAddress)
	e.srv.GraphDestroy(g, 0)
	assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 0), hipsys.ErrorIllegalAddress)
	assert.NoError(t, e.srv.Check([]compute.Binding{other, in}, 0))
	e.srv.GraphDestroy(g, 0) // a double destroy is a no-op
	assert.True(t, errors.Is(e.srv.Replay(g, 0), stream.ErrUnknownGraph))
}

// capture records body into a graph on stream 0 after a warm-up run of it.
func capture(t *testing.T, e *env, body func()) compute.GraphID {
	t.Helper()
	require.NoError(t, e.srv.GraphPrepare(0))
	body()
	require.NoError(t, e.srv.Sync(nil, 0).Wait())
	require.NoError(t, e.srv.BeginCapture(0))
	body()
	g, err := e.srv.EndCapture(0)
	require.NoError(t, err)
	return g
}
