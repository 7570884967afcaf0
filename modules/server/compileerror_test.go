package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// A kernel that writes no buffer (one that only prints) has nothing to carry its compile
// error: Call returns it, and the stream's next Sync reports it once more, so a caller
// who only looks at Sync sees it too.
func TestCompileErrorWithoutOutputReachesTheCaller(t *testing.T) {
	d, _ := openDevice(t, server.Options{CacheDir: "-"})
	src := fmt.Sprintf("// %d\n", time.Now().UnixNano()) + `#include <cstdio>
extern "C" __global__ void say(int n) { printf("%d\n", n) not C++ }`
	say := server.NewKernel(src, "say", hipsys.Dim3{X: 1, Y: 1, Z: 1}, nil)

	err := d.Call(say, grid(1), server.I32(1))
	var ce *server.CompileError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "say", ce.Entry)
	err = d.Sync()
	assert.ErrorIs(t, err, server.ErrCompilation, "the stream's next sync reports it")
	assert.ErrorAs(t, err, &ce)
	assert.NoError(t, d.Sync(), "once")

	// Launch and SyncContext the same; another stream's sync is not this one's.
	s1 := d.On(1)
	assert.ErrorIs(t, s1.Launch(say, grid(1), server.Args{Scalars: []server.Scalar{server.I32(1)}}), server.ErrCompilation)
	assert.NoError(t, d.Sync())
	assert.ErrorIs(t, s1.SyncContext(context.Background()), server.ErrCompilation)
	assert.NoError(t, s1.Sync())
}

// An entry point the source lacks is a compile error naming it, from Call.
func TestMissingEntryReachesTheCaller(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	missing := server.NewKernel(devSource, "dev_missing", devBlock, nil)
	err := d.Call(missing, grid(1))
	assert.ErrorIs(t, err, server.ErrCompilation)
	assert.Contains(t, err.Error(), `"dev_missing"`)
	before := f.Calls("hiprtcCompileProgram")
	assert.ErrorIs(t, d.Call(missing, grid(1)), server.ErrCompilation)
	assert.Equal(t, before, f.Calls("hiprtcCompileProgram"), "the code of a source that compiled is not compiled again")
	assert.ErrorIs(t, d.Sync(), server.ErrCompilation)
}
