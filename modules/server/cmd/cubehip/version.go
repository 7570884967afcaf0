package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

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
	version, rev := releasedVersion+"+devel", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = " " + s.Value
			}
		}
	}
	fmt.Fprintf(out, "cubehip %s%s\n%s %s/%s\nplatforms: %s\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH, strings.Join(hipsys.Platforms(), ", "))
	return nil
}
