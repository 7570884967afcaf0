package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain keeps the kernel caches in a temporary directory, so the tests neither read
// nor leave a user's cache. With CUBEHIP_CMD_TEST_RUN set, the test binary is the
// command itself, run on its arguments (runCommand): a fresh process, for what a process
// reads once (the cpu device count, which the first open of the platform fixes).
func TestMain(m *testing.M) {
	if os.Getenv("CUBEHIP_CMD_TEST_RUN") != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "cubehip-cmd-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("CUBEHIP_CACHE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestCommands(t *testing.T) {
	cases := []struct {
		name string
		run  func(*bytes.Buffer) error
		want []string
	}{
		{"devices", func(out *bytes.Buffer) error { return runDevices(out, nil) },
			[]string{"device 0:", "architecture", "compute units"}},
		{"demo", func(out *bytes.Buffer) error { return runDemo(out, []string{"-n", "5000"}) },
			[]string{
				"1. compile", "result checked", "captured 3 saxpy launches", "device time",
				"in use:", "read out1             ok", "read out2             FAILED", "hipErrorLaunchFailure",
				"read out3             ok", "read x (read by all)  ok", "out3 now carries out2's failure", "first copy (takes the pinned staging",
				"rewrote out2 from Go memory: read now returns <nil>", "0 allocations left",
			}},
		// The main job under every check runs clean: its kernels do nothing wrong.
		{"demo checked", func(out *bytes.Buffer) error {
			return runDemo(out, []string{"-platform", "cpu", "-n", "3000", "-check", "all"})
		}, []string{"result checked", "read out3             ok", "direct(reclaim at 1 B, exact)", "0 allocations left"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, c.run(&out), out.String())
			for _, w := range c.want {
				assert.Contains(t, out.String(), w)
			}
		})
	}
}

func TestBadFlags(t *testing.T) {
	var out bytes.Buffer
	assert.Error(t, runDemo(&out, []string{"-n", "0"}))
	assert.Error(t, runDemo(&out, []string{"-platform", "no-such"}))
	assert.ErrorContains(t, runDemo(&out, []string{"-check", "leakcheck"}), `unknown kernel check "leakcheck"`)
	err := runBench(&out, []string{"-nope"})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "flag provided but not defined"))
}

// bench prints every figure, marks the budgets that hold a GPU to its driver "n/a" on
// the cpu device, and fails exactly when a budget it judges is missed.
func TestBench(t *testing.T) {
	var out bytes.Buffer
	err := runBench(&out, []string{"-platform", "cpu", "-scale", "0.01"})
	for _, w := range []string{"launch", "alloc+free 1 MiB", "read 4 B, one stream", "read 4 B, streams", "launch, streams", "replay 10, one stream", "replay 10, streams", "needs the anchor", "write 256 MiB", "read 256 MiB"} {
		assert.Contains(t, out.String(), w)
	}
	assert.Contains(t, out.String(), "within 5% of raw: n/a")
	assert.NotContains(t, out.String(), "MISSED: ", "a judged line reads 'budget: verdict'")
	if strings.Contains(out.String(), ": MISSED") {
		assert.ErrorContains(t, err, "budget(s) missed")
	} else {
		assert.NoError(t, err)
	}

	out.Reset()
	err = runBench(&out, []string{"-platform", "cpu", "-scale", "0.01", "-json"})
	var rows []row
	require.NoError(t, json.Unmarshal(out.Bytes(), &rows), out.String())
	require.NotEmpty(t, rows)
	missedRows := 0
	for _, r := range rows {
		assert.NotEmpty(t, r.Name)
		// A cpu budget missed by less than 10% on a busy machine is noise: reported, not failed.
		assert.Contains(t, []string{"ok", "MISSED", "n/a", noiseVerdict}, r.Verdict, r.Name)
		if !cpuKernelNamed(r.Name) {
			assert.Equal(t, "n/a", r.Verdict, "%s: a GPU budget is not judged on the cpu device", r.Name)
		}
		if r.Verdict == "MISSED" {
			missedRows++
		}
		if !strings.HasPrefix(r.Budget, "needs 2 devices") { // the peer copy on one device
			assert.Greater(t, r.Device, 0.0, r.Name)
		}
	}
	assert.Equal(t, missedRows > 0, err != nil, "%v", err)
}

func cpuKernelNamed(name string) bool {
	for _, k := range cpuKernels {
		if k.name == name {
			return true
		}
	}
	return false
}

func TestDevicesJSON(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, runDevices(&out, []string{"-json"}))
	var all []deviceInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &all), out.String())
	found := false
	for _, d := range all {
		if d.Platform == "cpu" && d.Props != nil {
			found = true
			assert.Positive(t, d.Props.MaxThreadsPerBlock)
		}
	}
	assert.True(t, found, "the cpu device is listed: %s", out.String())
}

// The command line: global flags, help, -h, version, errors and their exit statuses.
func TestCommandLine(t *testing.T) {
	cases := []struct {
		args   []string
		status int
		stdout []string
		stderr []string
	}{
		{args: nil, status: 2, stderr: []string{"usage: cubehip"}},
		{args: []string{"-h"}, status: 0, stdout: []string{"usage: cubehip", "help CMD"}},
		{args: []string{"help"}, status: 0, stdout: []string{"usage: cubehip"}},
		{args: []string{"help", "bench"}, status: 0, stdout: []string{"-json", "-scale", "-platform", "-device"}},
		{args: []string{"help", "devices"}, status: 0, stdout: []string{"-json"}},
		{args: []string{"help", "nope"}, status: 2, stderr: []string{`unknown command "nope"`}},
		{args: []string{"devices", "-h"}, status: 0, stdout: []string{"-json"}},
		{args: []string{"bench", "-h"}, status: 0, stdout: []string{"-anchor"}},
		{args: []string{"demo", "-h"}, status: 0, stdout: []string{"-n"}},
		{args: []string{"compile", "-h"}, status: 0, stdout: []string{"-offload-arch", "-entry", "-json", "FILE"}},
		{args: []string{"help", "compile"}, status: 0, stdout: []string{"-offload-arch"}},
		{args: []string{"compile"}, status: 1, stderr: []string{"no source file"}},
		{args: []string{"version"}, status: 0, stdout: []string{"cubehip ", "go1.", "platforms: ", "cpu"}},
		{args: []string{"nope"}, status: 2, stderr: []string{`unknown command "nope"`}},
		{args: []string{"-nope"}, status: 2, stderr: []string{"flag provided but not defined: -nope"}},
		{args: []string{"-platform", "cpu", "devices"}, status: 0, stdout: []string{"cpu device 0:"}},
		{args: []string{"-platform", "cpu", "demo", "-n", "2000"}, status: 0, stdout: []string{"cubehip demo on cpu device 0"}},
		{args: []string{"-platform", "no-such", "demo"}, status: 2, stderr: []string{`cubehip: -platform "no-such": not a platform (one of auto, cpu, nvidia, amd)`}},
		{args: []string{"-platform", "cpu", "-device", "7", "demo"}, status: 1, stderr: []string{"device 7 of platform cpu"}},
		{args: []string{"demo", "-platform", "cpu", "-device", "3"}, status: 1, stderr: []string{"device 3 of platform cpu"}},
		{args: []string{"demo", "-n", "0"}, status: 1, stderr: []string{"-n 0"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			global.platform, global.device = "auto", 0
			var stdout, stderr bytes.Buffer
			assert.Equal(t, c.status, run(c.args, &stdout, &stderr), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
			for _, w := range c.stdout {
				assert.Contains(t, stdout.String(), w)
			}
			for _, w := range c.stderr {
				assert.Contains(t, stderr.String(), w)
			}
		})
	}
	global.platform, global.device = "auto", 0
}

// help for every command says what it does, then its flags.
func TestHelpSaysWhatEachCommandDoes(t *testing.T) {
	for _, c := range commands {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run([]string{"help", c.name}, &out, &errOut), errOut.String())
		lines := strings.Split(out.String(), "\n")
		require.Greater(t, len(lines), 2, c.name)
		assert.True(t, strings.HasPrefix(lines[0], "usage: cubehip "+c.name), "%s: %q", c.name, lines[0])
		assert.False(t, lines[1] == "" || strings.HasPrefix(lines[1], "  -"), "%s: no line on what it does before the flags: %q", c.name, out.String())
	}
}

// cache shows the directory, its size and its entries by kind; cache clear removes
// cubehip's own entries and nothing else there.
func TestCacheShowAndClear(t *testing.T) {
	dir := t.TempDir()
	for rel, n := range map[string]int{
		"kernels/a-cpu-x.co": 100, "kernels/b-cpu-x.co": 100, "cpu-v1/obj/ab/c.img": 10,
		"cpu-v1/pch/p/cubehip_base.h.gch": 2048, "cpu-v1/pch/p/cubehip_base.h": 5, "notes.txt": 1,
	} {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, make([]byte, n), 0o600))
	}
	var out bytes.Buffer
	require.NoError(t, runCache(&out, []string{"-dir", dir}))
	assert.Contains(t, out.String(), "cache: "+dir)
	assert.Contains(t, out.String(), "size:  2.2 KiB", "the stray notes.txt is not the cache's")
	assert.Regexp(t, `kernel code objects\s+2 files\s+200 B`, out.String())
	assert.Regexp(t, `cpu compiled objects\s+1 files`, out.String())
	assert.Regexp(t, `cpu precompiled preludes\s+1 files\s+2.0 KiB`, out.String())

	out.Reset()
	require.NoError(t, runCache(&out, []string{"-dir", dir, "clear"}))
	assert.NoDirExists(t, filepath.Join(dir, "kernels"))
	assert.NoDirExists(t, filepath.Join(dir, "cpu-v1"))
	assert.FileExists(t, filepath.Join(dir, "notes.txt"))
	out.Reset()
	require.NoError(t, runCache(&out, []string{"-dir", dir}))
	assert.Contains(t, out.String(), "empty")

	err := runCache(&out, []string{"-dir", dir, "clean"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"clean"`)
}

// The version a build from a checkout reports is the newest release in the module's
// CHANGELOG.md: a release that adds its entry must move releasedVersion too.
func TestReleasedVersionIsTheChangelogs(t *testing.T) {
	b, err := os.ReadFile("../../CHANGELOG.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - `).FindSubmatch(b)
	require.NotNil(t, m, "no released version in CHANGELOG.md")
	assert.Equal(t, "v"+string(m[1]), releasedVersion)

	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"version"}, &out, &errOut))
	assert.NotContains(t, out.String(), "(devel)")
	assert.Contains(t, out.String(), "cubehip "+releasedVersion)
}

// Each usage error is printed once, on stderr, and exits 2: a flag a command lacks, a
// -platform that names none, arguments a command does not take.
func TestUsageErrorsArePrintedOnce(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "-nope"}, "flag provided but not defined: -nope"},
		{[]string{"-platform", "no-such", "demo"}, `-platform "no-such": not a platform`},
		{[]string{"-platform", "gpu", "devices"}, `-platform "gpu": not a platform`},
		{[]string{"demo", "-platform", "no-such"}, `-platform "no-such": not a platform`},
		{[]string{"version", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"devices", "a", "b"}, `unexpected arguments ["a" "b"]`},
		{[]string{"bench", "-json", "x"}, `unexpected arguments ["x"]`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			global.platform, global.device = "auto", 0
			defer func() { global.platform, global.device = "auto", 0 }()
			var stdout, stderr bytes.Buffer
			assert.Equal(t, 2, run(c.args, &stdout, &stderr))
			assert.Equal(t, 1, strings.Count(stderr.String(), c.want), "stderr: %s", stderr.String())
			assert.Empty(t, stdout.String())
		})
	}
}

// compile -o DIR makes DIR when it is missing.
func TestCompileOutputDirIsCreated(t *testing.T) {
	src := filepath.Join(t.TempDir(), "k.hip")
	require.NoError(t, os.WriteFile(src, []byte(`extern "C" __global__ void k(float* p) { p[0] = 1; }`), 0o600))
	dir := filepath.Join(t.TempDir(), "new", "objects")
	var out bytes.Buffer
	err := runCompile(&out, []string{"-offload-arch", "gfx90a", "-o", dir, src})
	if err != nil && !strings.Contains(err.Error(), "-o ") {
		t.Skipf("no AMD compiler here to write code objects: %v", err)
	}
	require.NoError(t, err)
	assert.DirExists(t, dir)
}
