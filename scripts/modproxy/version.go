package main

import (
	"fmt"

	"golang.org/x/mod/semver"
)

// checkVersion accepts a version that can tag one of our modules and is newer than every
// version already released. Go reads a tag modules/<name>/vX.Y.Z only when it is
// canonical semantic versioning, and from v2 on only for a module path ending in /vN,
// which ours do not: a tag outside that is one no go command will ever find.
func checkVersion(version string, released []string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("version %q is not of the form vMAJOR.MINOR.PATCH[-PRERELEASE]", version)
	}
	if m := semver.Major(version); m != "v0" && m != "v1" {
		return fmt.Errorf("version %s: a %s module needs its path to end in /%s, and ours do not", version, m, m)
	}
	for _, r := range released {
		if !semver.IsValid(r) {
			return fmt.Errorf("released version %q is not semantic versioning", r)
		}
		if semver.Compare(version, r) <= 0 {
			return fmt.Errorf("version %s is not newer than the released %s", version, r)
		}
	}
	return nil
}
