package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A program whose module imports package server alone (testdata/serveronly, built as
// its own module, outside this workspace) opens a device and runs a kernel, and the
// package's godoc examples run there too: Open finds the platforms with no other import.
func TestOpenWithTheServerImportAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: not in -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("building a module needs the go command, which this machine lacks (a GPU host running a test binary)")
	}
	here, err := filepath.Abs(".")
	require.NoError(t, err)
	modules := filepath.Dir(here)
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/serveronly/main.go")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644))
	sum, err := os.ReadFile("go.sum")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	// The package's godoc examples, copied into the module as a package of their own:
	// they run there with no import that registers a platform.
	examples, err := os.ReadFile("example_device_test.go")
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "examples"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "examples", "example_test.go"), examples, 0o644))
	// hipsys and memory are required for the types the examples name (faults, pool
	// layouts), not for any registration.
	mod := "module serveronly\n\ngo 1.26.0\n\nrequire (\n"
	for _, m := range []string{"server", "hipsys", "memory", "stream"} {
		mod += "\tgithub.com/cubehip/cubehip/modules/" + m + " v0.0.0\n"
	}
	mod += ")\n\nreplace (\n"
	for _, m := range []string{"server", "hipsys", "memory", "stream"} {
		mod += "\tgithub.com/cubehip/cubehip/modules/" + m + " => " + filepath.Join(modules, m) + "\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod+")\n"), 0o644))

	build := exec.Command(gobin, "build", "-o", "serveronly", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	test := exec.Command(gobin, "test", "-count=1", "./examples")
	test.Dir = dir
	test.Env = build.Env
	out, err = test.CombinedOutput()
	require.NoError(t, err, "%s", out)

	run := exec.Command(filepath.Join(dir, "serveronly"))
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.True(t, strings.HasSuffix(strings.TrimSpace(string(out)), "[12 24 36 48]"), "%s", out)
}
