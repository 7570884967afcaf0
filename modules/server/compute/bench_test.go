package compute_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// BenchmarkServerLaunch measures the server's own cost per launch: the same empty kernel
// launched through Server.Launch and through hipsys ModuleLaunchKernel directly, side by
// side in one run, with a sync every 1024 launches so the stream's queue stays short.
// server-overhead-µs is the difference; the budget is 1 µs and 0 allocations.
func BenchmarkServerLaunch(b *testing.B) {
	e := newEnv(b)
	srv := e.srv
	buf := e.empty(0, 64)
	k := compute.NewKernel(`extern "C" __global__ void noop(float* out, unsigned n) {}`, "noop",
		hipsys.Dim3{X: 1, Y: 1, Z: 1}, []compute.Access{compute.Write})
	args := &compute.Args{Buffers: []compute.Binding{buf}, Scalars: []compute.Scalar{compute.U32(64)}}
	require.NoError(b, srv.Launch(k, compute.Static(1, 1, 1), args, 0, compute.Execute))
	require.NoError(b, srv.Sync(nil, 0).Wait())

	// The raw path: the same kernel, loaded by hand, on the same stream.
	p := srv.Platform()
	prog, err := p.RTCCreateProgram(k.Source, "noop.hip", nil)
	require.NoError(b, err)
	require.NoError(b, p.RTCCompileProgram(prog, nil))
	code, err := p.RTCGetCode(prog)
	require.NoError(b, err)
	require.NoError(b, p.RTCDestroyProgram(prog))
	mod, err := p.ModuleLoadData(code)
	require.NoError(b, err)
	fn, err := p.ModuleGetFunction(mod, "noop")
	require.NoError(b, err)
	st, err := srv.Streams().Stream(0)
	require.NoError(b, err)
	res, err := srv.GetResource(buf, 0)
	require.NoError(b, err)
	defer res.Release()
	var raw hipsys.KernelArgs

	var rawNs, srvNs float64
	b.Run("hipsys", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			raw.Reset().Ptr(res.Ptr).U32(64)
			if err := p.ModuleLaunchKernel(fn, hipsys.Dim3{X: 1, Y: 1, Z: 1}, k.Block, 0, st.Sys, &raw); err != nil {
				b.Fatal(err)
			}
			if i%1024 == 1023 {
				_ = p.StreamSynchronize(st.Sys)
			}
		}
		_ = p.StreamSynchronize(st.Sys)
		rawNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(rawNs/1e3, "µs/launch")
	})
	b.Run("server", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_ = srv.Launch(k, compute.Static(1, 1, 1), args, 0, compute.Execute)
			if i%1024 == 1023 {
				_ = p.StreamSynchronize(st.Sys)
			}
		}
		_ = p.StreamSynchronize(st.Sys)
		srvNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(srvNs/1e3, "µs/launch")
		b.ReportMetric((srvNs-rawNs)/1e3, "server-overhead-µs")
	})
	require.NoError(b, srv.Check([]compute.Binding{buf}, 0))
}

// TestLaunchAllocatesNothing is the zero-allocation budget of a steady-state launch,
// measured on the server's side of the platform: the same loop through hipsys directly
// is subtracted, so an allocation inside the platform's queue does not count.
func TestLaunchAllocatesNothing(t *testing.T) {
	e := newEnv(t)
	buf := e.empty(0, 64)
	args := &compute.Args{Buffers: []compute.Binding{buf}, Scalars: []compute.Scalar{compute.U32(64)}, Info: []uint64{1, 2, 3}}
	k := compute.NewKernel(`extern "C" __global__ void noop_info(float* out, unsigned n, const unsigned long long* info) {}`,
		"noop_info", hipsys.Dim3{X: 1, Y: 1, Z: 1}, []compute.Access{compute.Write})
	require.NoError(t, e.srv.Launch(k, compute.Static(1, 1, 1), args, 0, compute.Execute))
	n := 0
	allocs := testing.AllocsPerRun(2000, func() {
		_ = e.srv.Launch(k, compute.Static(1, 1, 1), args, 0, compute.Execute)
		if n++; n%512 == 0 {
			require.NoError(t, e.srv.Sync(nil, 0).Wait())
		}
	})
	require.NoError(t, e.srv.Sync(nil, 0).Wait())
	require.NoError(t, e.srv.Check([]compute.Binding{buf}, 0))
	t.Logf("allocations per launch (server + cpu platform): %.2f", allocs)
	assert.LessOrEqual(t, allocs, 0.01)
}
