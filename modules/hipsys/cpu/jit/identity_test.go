package jit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each input of a compile other than the program changes CodeIdentity, which a cache
// above the jit keys on: a change that goes unseen there hands out an object this
// compiler would no longer build.
func TestCodeIdentityCoversWhatDecidesTheCode(t *testing.T) {
	c := NewCompiler(t.TempDir())
	identity := func(options ...string) string {
		t.Helper()
		id, err := c.CodeIdentity(options)
		require.NoError(t, err)
		return id
	}
	base := identity("-DX=1")
	assert.Equal(t, base, identity("-DX=1"), "the same inputs, the same identity")
	assert.NotEqual(t, base, identity("-DX=2"), "other options")

	saved := WarpSize
	WarpSize = 96 - saved // the other of 32 and 64
	assert.NotEqual(t, base, identity("-DX=1"), "another warp width")
	WarpSize = saved

	t.Run("cxxflags", func(t *testing.T) {
		t.Setenv("CUBEHIP_CPU_CXXFLAGS", "-DY=1")
		assert.NotEqual(t, base, identity("-DX=1"))
	})

	t.Run("compiler", func(t *testing.T) {
		cxx := os.Getenv("CXX")
		if strings.TrimSpace(cxx) == "" {
			cxx = "c++"
		}
		wrapper := filepath.Join(t.TempDir(), "c++")
		require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+cxx+" \"$@\"\n"), 0o700))
		t.Setenv("CXX", wrapper)
		assert.NotEqual(t, base, identity("-DX=1"), "another compiler binary, even one that runs the same")
	})

	t.Run("prelude", func(t *testing.T) {
		saved := preludeHash
		t.Cleanup(func() { preludeHash = saved })
		preludeHash = func() string { return "another device library" }
		assert.NotEqual(t, base, identity("-DX=1"))
	})

	assert.Equal(t, base, identity("-DX=1"), "every change undone, the identity is back")
}

// The identity is what the jit's own cache keys on besides the program, so the two
// caches agree on what makes code different.
func TestCacheKeyIsCodeIdentityAndProgram(t *testing.T) {
	c := NewCompiler(t.TempDir())
	tc, err := findToolchain(c.root())
	require.NoError(t, err)
	id, err := c.CodeIdentity([]string{"-O2"})
	require.NoError(t, err)
	assert.Equal(t, codeKey(tc, []string{"-O2"}), id)
	assert.NotEqual(t, cacheKey(id, nil, "a"), cacheKey(id, nil, "b"))
	assert.NotEqual(t, cacheKey(id, []header{{"h", "a"}}, ""), cacheKey(id, nil, "ha"))
}
