package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// releasedVersion is the server module's latest release. go install module@version
// records that version in the binary, but a build from a checkout (go run, go build in
// the workspace) records "(devel)", which says nothing; such a build is then this
// version plus what came after, printed as releasedVersion+devel with the VCS revision.
// It is a constant, not the CHANGELOG read at build time, because go:embed cannot reach
// the module's CHANGELOG.md from this package; TestReleasedVersionIsTheChangelogs keeps
// the two in step.
const releasedVersion = "v0.1.0"

// runVersion prints the command's module version (and VCS revision when the build
// recorded one), the Go version and the platforms compiled in.
func runVersion(out io.Writer, args []string) error {
	fs := flags("version", out)
	if done, err := parseNoArgs(fs, args); done {
		return err
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintf(out, "cubehip %s\n%s %s/%s\nplatforms: %s\n", describeVersion(bi, checkoutRevision), runtime.Version(), runtime.GOOS, runtime.GOARCH, strings.Join(hipsys.Platforms(), ", "))
	return nil
}

// describeVersion is the version line's text for a build: the module version go install
// recorded, or for a build from a checkout releasedVersion+devel and the revision it was
// built from ("+ changes" when the tree had uncommitted ones). A build that recorded no
// revision (go run or go build with -buildvcs=false, as GOFLAGS may set, or a tree with
// no VCS) says the revision is unknown, and where the checkout its sources were read
// from is still there (checkout), what that checkout holds now, said as such: it may
// have moved since the build.
func describeVersion(bi *debug.BuildInfo, checkout func() string) string {
	version := releasedVersion + "+devel"
	if bi == nil {
		return version + " (revision unknown: the binary carries no build information)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v // a released module: the version names the commit
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		if modified == "true" {
			return version + " " + rev + " + changes"
		}
		return version + " " + rev
	}
	note := "revision unknown: the build recorded none, as go run, -buildvcs=false and a build outside a checkout do"
	if now := checkout(); now != "" {
		note += "; its source checkout is now at " + now
	}
	return version + " (" + note + ")"
}

// checkoutRevision is the git revision of the checkout this command's sources were
// compiled from, if that directory still exists and git can read it ("" otherwise), with
// " + changes" when its tree differs from the revision. A -trimpath build names its
// sources by module path, which is no directory, and gets "".
func checkoutRevision() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	dir := filepath.Dir(file)
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	// git is asked with a deadline: version must answer even where git hangs (a network
	// file system, a lock).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	head, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(head))
	status, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && len(strings.TrimSpace(string(status))) > 0 {
		rev += " + changes"
	}
	return rev
}
