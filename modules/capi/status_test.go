package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOwnStatusesStartWhereTheDocsSay: the header and the README name the first of
// cubehip's own statuses, and a host that tests a status against that number (HIP's
// below it, cubehip's from it up) must find every own status on its side.
func TestOwnStatusesStartWhereTheDocsSay(t *testing.T) {
	first := int64(-1)
	for s := range ownNames {
		if first < 0 || int64(s) < first {
			first = int64(s)
		}
	}
	want := strconv.FormatInt(first, 10)
	for _, doc := range []struct{ path, pattern string }{
		{"include/cubehip.h", `cubehip's own \((\d+) and\s+\*?\s*up\)`},
		{filepath.Join(root(t), "README.md"), `cubehip's own \((\d+) and up`},
	} {
		b, err := os.ReadFile(doc.path)
		require.NoError(t, err)
		m := regexp.MustCompile(doc.pattern).FindSubmatch(b)
		require.NotNil(t, m, "%s says nowhere where cubehip's own statuses start", doc.path)
		require.Equal(t, want, string(m[1]), "%s: cubehip's own statuses start at %s", doc.path, want)
	}
}
