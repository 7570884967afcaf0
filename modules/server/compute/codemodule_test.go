package compute_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server/compute"
)

// A module compiled ahead of time (ModuleCode) loads in another server as code: nothing
// is compiled there, and its kernel launches with the right result.
func TestCodeModule(t *testing.T) {
	src := fmt.Sprintf("// %d\n%s", time.Now().UnixNano(), kernelSource)
	first, _ := newServerIn(t, t.TempDir())
	code, err := first.ModuleCode(compute.ModuleOf(src))
	require.NoError(t, err)
	require.NotEmpty(t, code)

	second, f := newServerIn(t, t.TempDir())
	k := compute.NewCodeKernel(code, "add_one", addOne.Block, addOne.IO)
	assert.Equal(t, k.Module(), compute.ModuleOfCode(code).Module(), "every kernel of the code is one module")
	assert.NotEqual(t, compute.ModuleOf(string(code)).Module(), k.Module(), "a code module is never a source module")
	lit := &compute.Kernel{Code: code, Entry: "add_one"}
	assert.Equal(t, k.ID(), lit.ID(), "a literal hashes as the constructor does")
	assert.Equal(t, k.Module(), lit.Module())

	in, err := second.Create(f32bytes(1, 2), 0)
	require.NoError(t, err)
	defer in.Release()
	out, err := second.Empty(8, 0)
	require.NoError(t, err)
	defer out.Release()
	ib, _ := in.Binding()
	ob, _ := out.Binding()
	defer ib.Release()
	defer ob.Release()
	require.NoError(t, second.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{ib, ob}, Scalars: []compute.Scalar{compute.U32(2)}}, 0, compute.Execute))
	assert.Zero(t, f.Calls("hiprtcCompileProgram"), "code is loaded as it is")
	got, err := second.Read([]compute.CopyDescriptor{compute.Linear(ob, 8)}, 0).Wait()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 3}, bytesF32(got[0]))

	// A wrong entry says the code has no such kernel; it is no compile error.
	_, err = second.Compile(compute.NewCodeKernel(code, "nope", addOne.Block, addOne.IO))
	require.Error(t, err)
	assert.ErrorContains(t, err, "the module's code")
	assert.ErrorContains(t, err, "has no such kernel")
	assert.NotErrorIs(t, err, compute.ErrCompilation)

	// Code the platform refuses is a load error naming the module.
	bad := compute.NewCodeKernel([]byte("not code"), "add_one", addOne.Block, addOne.IO)
	err = second.LoadModule(bad)
	require.Error(t, err)
	assert.ErrorContains(t, err, "compiled code")
	assert.ErrorContains(t, err, bad.Module().String())
	assert.NotErrorIs(t, err, compute.ErrCompilation)

	// No IO and buffers: the launch says to give it.
	noIO := compute.NewCodeKernel(code, "add_one", addOne.Block, nil)
	err = second.Launch(noIO, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{ib, ob}, Scalars: []compute.Scalar{compute.U32(2)}}, 0, compute.DryRun)
	assert.ErrorIs(t, err, compute.ErrInvalidArgument)
	assert.ErrorContains(t, err, "a kernel of a compiled module: give IO")
}
