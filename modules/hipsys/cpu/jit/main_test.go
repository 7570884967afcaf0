package jit_test

import (
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit/internal/hostmem"
)

// TestMain points the cache at a scratch directory (Load writes under DefaultCacheDir)
// unless the caller chose one, so tests never write into the user's cache.
func TestMain(m *testing.M) {
	if os.Getenv("CUBEHIP_CACHE_DIR") == "" {
		dir, err := os.MkdirTemp("", "cubehip-jit-test-*")
		if err != nil {
			panic(err)
		}
		os.Setenv("CUBEHIP_CACHE_DIR", dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// One compiler for the package: tests that share a source share its compile.
var (
	sharedCompiler     *jit.Compiler
	sharedCompilerOnce sync.Once
)

func compiler() *jit.Compiler {
	sharedCompilerOnce.Do(func() { sharedCompiler = jit.NewCompiler("") })
	return sharedCompiler
}

// load compiles and loads src; the module is closed when the test ends.
func load(t testing.TB, src string, options ...string) *jit.Module {
	t.Helper()
	img, log, err := compiler().Compile(src, "test.hip", nil, options)
	require.NoError(t, err, log)
	m, err := jit.Load(img)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

func function(t testing.TB, m *jit.Module, name string) *jit.Function {
	t.Helper()
	f, err := m.Function(name)
	require.NoError(t, err)
	return f
}

// buffer is n elements of C memory standing in for device memory.
type buffer[T any] struct {
	ptr uintptr
	s   []T
}

func alloc[T any](t testing.TB, n int) buffer[T] {
	t.Helper()
	var zero T
	size := n * int(sizeOf(zero))
	p := hostmem.Alloc(size)
	require.NotZero(t, p)
	t.Cleanup(func() { hostmem.Free(p) })
	return buffer[T]{p, hostmem.Slice[T](p, n)}
}

func (b buffer[T]) dev() hipsys.DevicePtr { return hipsys.DevicePtr(b.ptr) }

func dim(x, y, z uint32) hipsys.Dim3 { return hipsys.Dim3{X: x, Y: y, Z: z} }

func launch(t testing.TB, f *jit.Function, grid, block hipsys.Dim3, shared uint32, args *hipsys.KernelArgs) {
	t.Helper()
	require.NoError(t, f.Launch(grid, block, shared, args.Buffer(), args.Offsets()))
}

func statusOf(err error) hipsys.Status { return hipsys.StatusOf(err) }
