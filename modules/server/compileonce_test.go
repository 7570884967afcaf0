package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// A kernel that fails to compile is compiled once per launch, not twice: the launch
// checks its arguments against the kernel's parameters, which needs the kernel
// compiled, and the compile error found there is the one its outputs carry. There is
// no negative cache: the next launch compiles again, once, so a failure that was not the
// source's (an injected one here) heals.
func TestFailedCompileRunsOncePerLaunch(t *testing.T) {
	d, f := openDevice(t, server.Options{CacheDir: "-"})
	broken := server.NewKernel(`extern "C" __global__ void dev_once(float* out) { not C++ }`, "dev_once", devBlock, []server.Access{server.Write})
	out := alloc(t, d.Stream, 64)
	for i := range 2 {
		before := f.Calls("hiprtcCompileProgram")
		require.ErrorIs(t, d.Launch(broken, grid(1), server.Args{Buffers: []*server.Buffer{out}}), server.ErrCompilation)
		assert.Equal(t, before+1, f.Calls("hiprtcCompileProgram"), "launch %d compiles once", i)
		assert.ErrorIs(t, d.Check(out), server.ErrCompilation)
	}
	before := f.Calls("hiprtcCompileProgram")
	require.ErrorIs(t, d.Call(broken, grid(1), out.Arg()), server.ErrCompilation)
	assert.Equal(t, before+1, f.Calls("hiprtcCompileProgram"), "a call compiles once")
	_, err := d.Read(out)
	assert.ErrorIs(t, err, server.ErrCompilation)
}
