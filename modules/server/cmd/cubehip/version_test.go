package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The version line of each kind of build: a released module's version; a checkout's
// revision, marked when the tree had changes; and, where the build recorded none, that
// the revision is unknown, with what the source checkout holds now said as such.
func TestDescribeVersion(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	checkout := func(s string) func() string { return func() string { return s } }
	build := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/cubehip/cubehip/modules/server", Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, c := range []struct {
		name     string
		bi       *debug.BuildInfo
		checkout string
		want     string
	}{
		{"released", build("v0.2.0", "vcs.revision", rev), "", "v0.2.0"},
		{"checkout", build("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "", releasedVersion + "+devel " + rev},
		{"checkout with changes", build("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "", releasedVersion + "+devel " + rev + " + changes"},
		{"no revision, no checkout", build("(devel)"), "",
			releasedVersion + "+devel (revision unknown: the build recorded none, as go run, -buildvcs=false and a build outside a checkout do)"},
		{"no revision, a checkout", build("(devel)", "vcs.modified", "true"), "abc + changes",
			releasedVersion + "+devel (revision unknown: the build recorded none, as go run, -buildvcs=false and a build outside a checkout do; its source checkout is now at abc + changes)"},
		{"no build information", nil, "abc", releasedVersion + "+devel (revision unknown: the binary carries no build information)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, describeVersion(c.bi, checkout(c.checkout)))
		})
	}
}

// revisions are a checkout's HEAD before and after a step: other work may commit while
// a test runs, and the revision a build recorded is one of the two.
func revisions(t *testing.T, dir string) func() []string {
	t.Helper()
	head := func() string {
		out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
		if err != nil {
			t.Skipf("not a git checkout, or no git: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	first := head()
	return func() []string { return []string{first, head()} }
}

var revisionOf = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

// A build from a checkout says its revision: go run (as this test binary, which records
// none) through the checkout its sources are in, and go build with VCS stamping on
// through what it recorded.
func TestVersionNamesTheRevision(t *testing.T) {
	dir, err := filepath.Abs(".")
	require.NoError(t, err)
	around := revisions(t, dir)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"version"}, &out, &errOut), errOut.String())
	line := strings.SplitN(out.String(), "\n", 2)[0]
	assert.Contains(t, line, "revision unknown: the build recorded none")
	assert.Contains(t, line, "its source checkout is now at ")
	assert.Contains(t, around(), revisionOf.FindString(line), line)

	if testing.Short() {
		t.Skip("builds the command: not in -short")
	}
	around = revisions(t, dir)
	bin := filepath.Join(t.TempDir(), "cubehip")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	b, err := build.CombinedOutput()
	require.NoError(t, err, "%s", b)
	got, err := exec.Command(bin, "version").Output()
	require.NoError(t, err)
	line = strings.SplitN(string(got), "\n", 2)[0]
	assert.Regexp(t, `^cubehip `+regexp.QuoteMeta(releasedVersion)+`\+devel [0-9a-f]{40}( \+ changes)?$`, line)
	assert.Contains(t, around(), revisionOf.FindString(line), line)
}
