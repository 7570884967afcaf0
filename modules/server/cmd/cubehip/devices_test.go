package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCommand runs the command line args in a process of its own (the test binary, as
// TestMain runs it), with the environment's additions env, and returns its exit status,
// stdout and stderr.
func runCommand(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "CUBEHIP_CMD_TEST_RUN=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stdout.String(), stderr.String()
}

// -platform and -device restrict devices' list, and mean the same before the command
// and after it. Two cpu devices, so that -device has one to leave out.
func TestDevicesRestricted(t *testing.T) {
	two := []string{"CUBEHIP_CPU_DEVICES=2"}
	devices := func(args ...string) (int, string, string) { return runCommand(t, two, args...) }

	status, before, stderr := devices("-platform", "cpu", "devices")
	require.Equal(t, 0, status, stderr)
	status, after, stderr := devices("devices", "-platform", "cpu")
	require.Equal(t, 0, status, stderr)
	assert.Equal(t, before, after, "the flag means the same before and after the command")
	for _, out := range []string{before, after} {
		assert.Contains(t, out, "cpu device 0:")
		assert.Contains(t, out, "cpu device 1:")
		assert.NotRegexp(t, `(?m)^(nvidia|amd)\b`, out, "-platform cpu lists cpu alone")
	}

	status, out, stderr := devices("devices", "-platform", "cpu", "-json")
	require.Equal(t, 0, status, stderr)
	var all []deviceInfo
	require.NoError(t, json.Unmarshal([]byte(out), &all), out)
	require.Len(t, all, 2)
	for i, d := range all {
		assert.Equal(t, "cpu", d.Platform)
		assert.Equal(t, i, d.Index)
	}

	// -device lists that device alone, before the command or after it.
	for _, args := range [][]string{{"-platform", "cpu", "-device", "1", "devices"}, {"devices", "-platform", "cpu", "-device", "1"}} {
		status, out, stderr := devices(args...)
		require.Equal(t, 0, status, "%v: %s", args, stderr)
		assert.Contains(t, out, "cpu device 1:", "%v", args)
		assert.NotContains(t, out, "cpu device 0:", "%v", args)
	}
	status, out, stderr = devices("devices", "-platform", "cpu", "-device", "5")
	assert.Equal(t, 1, status)
	assert.Contains(t, out, "no such device: the platform has 2")
	assert.Contains(t, stderr, "platform cpu has no device 5")
	status, _, stderr = devices("devices", "-device", "-1")
	assert.Equal(t, 2, status)
	assert.Contains(t, stderr, "-device -1")

	// Without -platform, or with auto, every platform is listed, each device of each.
	for _, args := range [][]string{{"devices"}, {"-platform", "auto", "devices"}, {"devices", "-platform", "auto"}} {
		status, out, stderr := devices(args...)
		require.Equal(t, 0, status, "%v: %s", args, stderr)
		for _, p := range []string{"cpu device 0:", "cpu device 1:"} {
			assert.Contains(t, out, p, "%v", args)
		}
		for _, p := range []string{"nvidia", "amd"} {
			assert.Regexp(t, `(?m)^`+p+`\b`, out, "%v lists every platform", args)
		}
	}
}

// In one process (the tests'), the flags before the command are globals the next run
// finds: a -device given to one run does not restrict the devices of a later one.
func TestDevicesDeviceFlagIsPerRun(t *testing.T) {
	defer func() { global.platform, global.device = "auto", 0 }()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, run([]string{"-platform", "cpu", "-device", "9", "devices"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stderr.String(), "platform cpu has no device 9")
	stdout.Reset()
	require.NoError(t, runDevices(&stdout, []string{"-platform", "cpu"}))
	assert.Contains(t, stdout.String(), "cpu device 0:")
}
