package compute_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

// identified is the cpu platform (behind a fault wrapper, which counts compiles) with a
// code identity the test chooses, as a compiler upgrade or another device library would
// change it.
type identified struct {
	*faults.Platform
	identity string
	err      error
}

func (p *identified) CodeIdentity([]string) (string, error) { return p.identity, p.err }

// serverOver is a server over p with its kernel cache in dir and its warnings in logs.
func serverOver(t *testing.T, p hipsys.Platform, dir string, logs *logBuffer) *compute.Server {
	t.Helper()
	srv, err := compute.New(p, compute.Config{CacheDir: dir, Logger: logs.logger(),
		Stream: []stream.Option{stream.WithGPUProps(smallProps)}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv
}

// dryRun compiles (or loads) k on srv, as a first launch does.
func dryRun(t *testing.T, srv *compute.Server, k *compute.Kernel) {
	t.Helper()
	require.NoError(t, srv.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: make([]compute.Binding, len(k.IO)), Scalars: []compute.Scalar{compute.U32(0)}}, 0, compute.DryRun))
}

// entries lists the cache's entries under dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "kernels", "*.co"))
	require.NoError(t, err)
	return files
}

// The disk cache's key includes the compiler's code identity: a changed identity (a
// compiler upgrade, other device headers, another warp width) is a compile, never a
// stale hit, and the old identity still finds its own entry.
func TestDiskCacheKeyedByCodeIdentity(t *testing.T) {
	dir := t.TempDir()
	k := compute.NewKernel(unique(kernelSource), "add_one", addOne.Block, addOne.IO)
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	for i, step := range []struct {
		identity string
		compiles int
	}{{"compiler 1", 1}, {"compiler 1", 0}, {"compiler 2", 1}, {"compiler 1", 0}, {"compiler 2", 0}} {
		f := faults.Wrap(p)
		dryRun(t, serverOver(t, &identified{Platform: f, identity: step.identity}, dir, &logBuffer{}), k)
		assert.Equal(t, step.compiles, f.Calls("hiprtcCompileProgram"), "step %d (%s)", i, step.identity)
	}
	assert.Len(t, entries(t, dir), 2, "one entry per identity")

	// A platform that cannot name its identity keeps nothing on disk: each server compiles.
	other := t.TempDir()
	for range 2 {
		f := faults.Wrap(p)
		unknown := &identified{Platform: f, err: fmt.Errorf("%w: no identity", hipsys.ErrorNotSupported)}
		dryRun(t, serverOver(t, unknown, other, &logBuffer{}), k)
		assert.Equal(t, 1, f.Calls("hiprtcCompileProgram"))
	}
	assert.Empty(t, entries(t, other))
}

// valueSource's kernel writes VALUE, a macro the test defines in a different place each
// time: a stale cache hit returns the old value.
const valueSource = `extern "C" __global__ void value(int* out) { out[0] = VALUE; }`

// runValue launches valueSource's kernel built with options on a new server over dir and
// returns what it wrote and how many compiles the server ran.
func runValue(t *testing.T, dir, src string, options ...string) (int32, int) {
	t.Helper()
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	f := faults.Wrap(p)
	srv := serverOver(t, f, dir, &logBuffer{})
	k := compute.NewKernel(src, "value", hipsys.Dim3{X: 1, Y: 1, Z: 1}, []compute.Access{compute.Write}, options...)
	out, err := srv.Empty(4, 0)
	require.NoError(t, err)
	defer out.Release()
	ob, err := out.Binding()
	require.NoError(t, err)
	defer ob.Release()
	require.NoError(t, srv.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{ob}}, 0, compute.Execute))
	got, err := srv.Read([]compute.CopyDescriptor{compute.Linear(ob, 4)}, 0).Wait()
	require.NoError(t, err)
	return int32(binary.LittleEndian.Uint32(got[0])), f.Calls("hiprtcCompileProgram")
}

// Each input of the cpu device's compile that is not in the kernel's source changes the
// code it runs, and so the disk cache's key: the options, $CUBEHIP_CPU_CXXFLAGS and the
// compiler ($CXX). Filled under one, the cache answers nothing to the other; back under
// the first, it answers without compiling.
func TestDiskCacheFollowsCompileInputs(t *testing.T) {
	t.Setenv("CUBEHIP_CPU_PCH", "0") // no background builds of the prelude on a small machine
	src := unique(valueSource)

	t.Run("options", func(t *testing.T) {
		dir := t.TempDir()
		for _, step := range []struct{ value, compiles int }{{1, 1}, {2, 1}, {1, 0}} {
			got, compiles := runValue(t, dir, src, fmt.Sprintf("-DVALUE=%d", step.value))
			assert.Equal(t, int32(step.value), got)
			assert.Equal(t, step.compiles, compiles, "VALUE=%d", step.value)
		}
	})

	t.Run("cxxflags", func(t *testing.T) {
		dir := t.TempDir()
		for _, step := range []struct{ value, compiles int }{{1, 1}, {2, 1}, {1, 0}} {
			t.Setenv("CUBEHIP_CPU_CXXFLAGS", fmt.Sprintf("-DVALUE=%d", step.value))
			got, compiles := runValue(t, dir, src)
			assert.Equal(t, int32(step.value), got, "CUBEHIP_CPU_CXXFLAGS=-DVALUE=%d", step.value)
			assert.Equal(t, step.compiles, compiles, "CUBEHIP_CPU_CXXFLAGS=-DVALUE=%d", step.value)
		}
	})

	t.Run("compiler", func(t *testing.T) {
		dir := t.TempDir()
		cxx := os.Getenv("CXX")
		if strings.TrimSpace(cxx) == "" {
			cxx = "c++"
		}
		// Two compilers that differ only in what they define, as two releases differ in
		// what they build: the key tells them apart by their identity.
		wrappers := map[int]string{}
		for _, v := range []int{1, 2} {
			w := filepath.Join(t.TempDir(), "c++")
			require.NoError(t, os.WriteFile(w, fmt.Appendf(nil, "#!/bin/sh\nexec %s -DVALUE=%d \"$@\"\n", cxx, v), 0o700))
			wrappers[v] = w
		}
		for _, step := range []struct{ value, compiles int }{{1, 1}, {2, 1}, {1, 0}} {
			t.Setenv("CXX", wrappers[step.value])
			got, compiles := runValue(t, dir, src)
			assert.Equal(t, int32(step.value), got, "CXX defining VALUE=%d", step.value)
			assert.Equal(t, step.compiles, compiles, "CXX defining VALUE=%d", step.value)
		}
	})
}

const warpWidthSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void warp_width(unsigned* out) {
	unsigned long long lanes = __ballot(1);
	if (threadIdx.x == 0) { out[0] = warpSize; out[1] = __popcll(lanes); }
}`

// TestDiskCacheWarpWidth runs a kernel that reads warpSize and __ballot in child
// processes sharing one cache: at 32 lanes, then at 64 (CUBEHIP_CPU_WARP_SIZE is read
// when a process starts). The 64-lane run must compile and give 64-lane answers, not
// load the 32-lane object; a later 32-lane run finds its own.
func TestDiskCacheWarpWidth(t *testing.T) {
	if dir := os.Getenv("CUBEHIP_SERVER_TEST_WARP_CHILD"); dir != "" {
		p, err := hipsys.Open("cpu")
		require.NoError(t, err)
		f := faults.Wrap(p)
		srv := serverOver(t, f, dir, &logBuffer{})
		k := compute.NewKernel(os.Getenv("CUBEHIP_SERVER_TEST_SOURCE"), "warp_width", hipsys.Dim3{X: 64, Y: 1, Z: 1}, []compute.Access{compute.Write})
		out, err := srv.Empty(8, 0)
		require.NoError(t, err)
		defer out.Release()
		ob, err := out.Binding()
		require.NoError(t, err)
		defer ob.Release()
		require.NoError(t, srv.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{ob}}, 0, compute.Execute))
		got, err := srv.Read([]compute.CopyDescriptor{compute.Linear(ob, 8)}, 0).Wait()
		require.NoError(t, err)
		fmt.Printf("warpSize=%d ballot=%d compiles=%d\n", binary.LittleEndian.Uint32(got[0]), binary.LittleEndian.Uint32(got[0][4:]),
			f.Calls("hiprtcCompileProgram"))
		return
	}
	dir := t.TempDir()
	src := unique(warpWidthSource)
	for _, step := range []struct{ lanes, compiles int }{{32, 1}, {64, 1}, {32, 0}, {64, 0}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDiskCacheWarpWidth$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CUBEHIP_SERVER_TEST_WARP_CHILD="+dir, "CUBEHIP_SERVER_TEST_SOURCE="+src,
			fmt.Sprintf("CUBEHIP_CPU_WARP_SIZE=%d", step.lanes), "CUBEHIP_CPU_PCH=0")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), fmt.Sprintf("warpSize=%d ballot=%d compiles=%d", step.lanes, step.lanes, step.compiles))
	}
}

// A damaged entry (cut short, a byte of its code or checksum flipped, another kernel's
// entry under its name) is never loaded: it costs a compile, the kernel gives the right
// answer, and the entry is written whole again.
func TestDiskCacheDamagedEntryRecompiles(t *testing.T) {
	t.Setenv("CUBEHIP_CPU_PCH", "0")
	src := unique(valueSource)
	for _, damage := range []struct {
		name string
		do   func(t *testing.T, file string, b []byte)
	}{
		{"truncated", func(t *testing.T, file string, b []byte) { require.NoError(t, os.Truncate(file, int64(len(b)/2))) }},
		{"empty", func(t *testing.T, file string, b []byte) { require.NoError(t, os.Truncate(file, 0)) }},
		{"code byte flipped", func(t *testing.T, file string, b []byte) {
			b[len(b)-len(b)/3] ^= 0x40 // inside the code object, past the header
			require.NoError(t, os.WriteFile(file, b, 0o600))
		}},
		{"checksum byte flipped", func(t *testing.T, file string, b []byte) {
			b[len("CUBEHIPCO1\n")+5] ^= 1
			require.NoError(t, os.WriteFile(file, b, 0o600))
		}},
		{"garbage", func(t *testing.T, file string, b []byte) {
			require.NoError(t, os.WriteFile(file, []byte("garbage"), 0o600))
		}},
	} {
		t.Run(damage.name, func(t *testing.T) {
			dir := t.TempDir()
			got, compiles := runValue(t, dir, src, "-DVALUE=5")
			require.Equal(t, int32(5), got)
			require.Equal(t, 1, compiles)
			files := entries(t, dir)
			require.Len(t, files, 1)
			whole, err := os.ReadFile(files[0])
			require.NoError(t, err)

			damage.do(t, files[0], append([]byte(nil), whole...))
			got, compiles = runValue(t, dir, src, "-DVALUE=5")
			assert.Equal(t, int32(5), got)
			assert.Equal(t, 1, compiles, "a damaged entry is compiled again")
			again, err := os.ReadFile(files[0])
			require.NoError(t, err)
			assert.Equal(t, whole, again, "and written whole again")

			_, compiles = runValue(t, dir, src, "-DVALUE=5")
			assert.Zero(t, compiles, "the rewritten entry is used")
		})
	}

	t.Run("another kernel's entry", func(t *testing.T) {
		dir := t.TempDir()
		runValue(t, dir, src, "-DVALUE=6")
		runValue(t, dir, src, "-DVALUE=7")
		files := entries(t, dir)
		require.Len(t, files, 2)
		b, err := os.ReadFile(files[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(files[1], b, 0o600)) // both names now hold one entry
		for _, v := range []int32{6, 7} {
			got, _ := runValue(t, dir, src, fmt.Sprintf("-DVALUE=%d", v))
			assert.Equal(t, v, got, "each kernel runs its own code")
		}
	})
}

// The cache directory and what is written into it are the user's alone: directories
// 0700, entries 0600.
func TestDiskCacheModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	got, _ := runValue(t, dir, unique(valueSource), "-DVALUE=1")
	require.Equal(t, int32(1), got)
	for _, d := range []string{dir, filepath.Join(dir, "kernels")} {
		st, err := os.Stat(d)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), d)
	}
	files := entries(t, dir)
	require.Len(t, files, 1)
	st, err := os.Stat(files[0])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	leftovers, err := filepath.Glob(filepath.Join(dir, "kernels", ".tmp-*"))
	require.NoError(t, err)
	assert.Empty(t, leftovers, "the temporary file was renamed into place")
}

// A cache directory others can write to (or that another user owns) could hold code
// planted for this process to load: it is refused, with one warning per process, and
// every server compiles instead.
func TestDiskCacheRefusesSharedDirectory(t *testing.T) {
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	k := compute.NewKernel(unique(kernelSource), "add_one", addOne.Block, addOne.IO)
	refused := func(t *testing.T, dir, why string) {
		t.Helper()
		logs := &logBuffer{}
		for i := range 3 {
			f := faults.Wrap(p)
			dryRun(t, serverOver(t, f, dir, logs), k)
			assert.Equal(t, 1, f.Calls("hiprtcCompileProgram"), "server %d compiles: nothing is read from the cache", i)
		}
		assert.Equal(t, 1, logs.warnings(), "one warning per process:\n%s", logs)
		assert.Contains(t, logs.String(), why)
		assert.Empty(t, entries(t, dir), "nothing is written there")
	}

	t.Run("root writable by others", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o777))
		refused(t, dir, "writable by its group or by others (mode 0777)")
	})
	t.Run("kernels writable by its group", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(dir, "kernels"), 0o700))
		require.NoError(t, os.Chmod(filepath.Join(dir, "kernels"), 0o770))
		refused(t, dir, "writable by its group or by others (mode 0770)")
	})
	t.Run("owned by another user", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Skipf("cannot give a directory away without privileges: %v", err)
		}
		refused(t, dir, "belongs to another user")
	})
	t.Run("private directory", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o755)) // readable by others is no risk
		logs := &logBuffer{}
		f := faults.Wrap(p)
		dryRun(t, serverOver(t, f, dir, logs), k)
		assert.Zero(t, logs.warnings(), "%s", logs)
		assert.Len(t, entries(t, dir), 1)
	})
}
