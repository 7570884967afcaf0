package compute_test

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

// newServerIn is a server over a fresh fault wrapper with its kernel cache in dir.
func newServerIn(t *testing.T, dir string) (*compute.Server, *faults.Platform) {
	t.Helper()
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	f := faults.Wrap(p)
	srv, err := compute.New(f, compute.Config{CacheDir: dir, Logger: slog.New(slog.DiscardHandler),
		Stream: []stream.Option{stream.WithGPUProps(smallProps)}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv, f
}

func TestKernelDiskCache(t *testing.T) {
	dir := t.TempDir()
	// A source no earlier run compiled, so the cpu compiler's own cache cannot answer.
	src := fmt.Sprintf("// %d\n%s", time.Now().UnixNano(), kernelSource)
	k := compute.NewKernel(src, "add_one", addOne.Block, addOne.IO)

	first, f1 := newServerIn(t, dir)
	require.NoError(t, first.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: make([]compute.Binding, 2)}, 0, compute.DryRun))
	assert.Equal(t, 1, f1.Calls("hiprtcCompileProgram"))
	files, err := filepath.Glob(filepath.Join(dir, "kernels", "*.co"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Contains(t, filepath.Base(files[0]), "-cpu-", "keyed by platform and architecture")

	// Another server (as a second process would) loads the code object without compiling.
	second, f2 := newServerIn(t, dir)
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
	assert.Zero(t, f2.Calls("hiprtcCompileProgram"))
	got, err := second.Read([]compute.CopyDescriptor{compute.Linear(ob, 8)}, 0).Wait()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 3}, bytesF32(got[0]))

	// A corrupt entry is recompiled and overwritten, not a failure.
	require.NoError(t, os.WriteFile(files[0], []byte("garbage"), 0o644))
	third, f3 := newServerIn(t, dir)
	require.NoError(t, third.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: make([]compute.Binding, 2)}, 0, compute.DryRun))
	assert.Equal(t, 1, f3.Calls("hiprtcCompileProgram"))
	code, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.NotEqual(t, "garbage", string(code))
}

func TestKernelIDs(t *testing.T) {
	a := compute.NewKernel("src", "entry", hipsys.Dim3{X: 1}, nil)
	b := compute.NewKernel("src", "entry", hipsys.Dim3{X: 64}, nil, "-O3")
	c := compute.NewKernel("sr", "centry", hipsys.Dim3{X: 1}, nil)
	lit := &compute.Kernel{Source: "src", Entry: "entry"}
	assert.NotEqual(t, a.ID(), b.ID(), "options are part of the identity")
	assert.NotEqual(t, a.ID(), c.ID(), "parts cannot slide into each other")
	assert.Equal(t, a.ID(), lit.ID(), "the block shape is not")
}

// TestKernelDiskCacheSecondProcess runs this test binary twice as a child: the first
// child compiles the kernel, the second loads the first one's code object from disk.
func TestKernelDiskCacheSecondProcess(t *testing.T) {
	if dir := os.Getenv("CUBEHIP_SERVER_TEST_CHILD"); dir != "" {
		srv, f := newServerIn(t, dir)
		k := compute.NewKernel(os.Getenv("CUBEHIP_SERVER_TEST_SOURCE"), "add_one", addOne.Block, addOne.IO)
		require.NoError(t, srv.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: make([]compute.Binding, 2)}, 0, compute.DryRun))
		fmt.Printf("compiles=%d\n", f.Calls("hiprtcCompileProgram"))
		return
	}
	dir := t.TempDir()
	src := fmt.Sprintf("// process %d\n%s", time.Now().UnixNano(), kernelSource)
	for _, want := range []string{"compiles=1", "compiles=0"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKernelDiskCacheSecondProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CUBEHIP_SERVER_TEST_CHILD="+dir, "CUBEHIP_SERVER_TEST_SOURCE="+src)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), want)
	}
}
