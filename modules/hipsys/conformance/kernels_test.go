package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKernels checks the embedded sources' shape, which other platforms' tests rely on
// (they may compile every source of Kernels() ahead of time).
func TestKernels(t *testing.T) {
	ks := Kernels()
	require.NotEmpty(t, ks)
	seen := map[string]bool{}
	for _, k := range ks {
		assert.NotEmpty(t, k.Name)
		assert.False(t, seen[k.Name], "duplicate %s", k.Name)
		seen[k.Name] = true
		assert.True(t, strings.HasPrefix(skipComments(k.Source), "#include <hip/hip_runtime.h>"),
			"%s: the first line of code includes hip/hip_runtime.h", k.Name)
		assert.NotEmpty(t, k.Entries, "%s has no extern \"C\" entry", k.Name)
		for _, e := range k.Entries {
			assert.Equal(t, 1, strings.Count(k.Source, " "+e+"("), "%s: entry %s defined once", k.Name, e)
		}
	}
	assert.Equal(t, []string{"vector_add", "saxpy"}, kernel("vector").Entries)
	ks[0].Entries[0] = "mutated"
	assert.NotEqual(t, "mutated", Kernels()[0].Entries[0], "Kernels returns a fresh copy")
}

// skipComments drops the leading // comment lines of a source.
func skipComments(src string) string {
	for strings.HasPrefix(src, "//") {
		_, src, _ = strings.Cut(src, "\n")
	}
	return src
}
