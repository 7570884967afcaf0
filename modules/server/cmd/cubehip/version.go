package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// runVersion prints the command's module version (and VCS revision when the build
// recorded one), the Go version and the platforms compiled in.
func runVersion(out io.Writer, args []string) error {
	fs := flags("version", out)
	if done, err := parse(fs, args); done {
		return err
	}
	version, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
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
