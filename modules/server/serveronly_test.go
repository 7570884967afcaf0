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
// its own module, outside this workspace) opens a device and runs a kernel: Open finds
// the platforms with no other import.
func TestOpenWithTheServerImportAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: not in -short")
	}
	gobin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command builds the module")
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
	mod := "module serveronly\n\ngo 1.26.0\n\nrequire github.com/cubehip/cubehip/modules/server v0.0.0\n\nreplace (\n"
	for _, m := range []string{"server", "hipsys", "memory", "stream"} {
		mod += "\tgithub.com/cubehip/cubehip/modules/" + m + " => " + filepath.Join(modules, m) + "\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod+")\n"), 0o644))

	build := exec.Command(gobin, "build", "-o", "serveronly", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	run := exec.Command(filepath.Join(dir, "serveronly"))
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.True(t, strings.HasSuffix(strings.TrimSpace(string(out)), "[12 24 36 48]"), "%s", out)
}
