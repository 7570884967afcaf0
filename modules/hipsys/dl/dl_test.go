package dl

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenMissingLibraryNamesIt(t *testing.T) {
	_, err := Open("libcubehip-no-such.so.9", "libcubehip-no-such.so")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), "libcubehip-no-such.so.9")
	assert.Contains(t, err.Error(), "libcubehip-no-such.so")
}

func TestOpenFallsBackToLaterName(t *testing.T) {
	lib, err := Open("libcubehip-no-such.so", "libc.so.6")
	require.NoError(t, err)
	assert.Equal(t, "libc.so.6", lib.Name)
}

func TestSymRenamedAndMissing(t *testing.T) {
	lib, err := Open("libc.so.6")
	require.NoError(t, err)
	p, err := lib.Sym("cubehip_newer_name", "malloc")
	require.NoError(t, err)
	assert.NotNil(t, p)

	_, err = lib.Sym("cubehip_missing_a", "cubehip_missing_b")
	var se *SymbolError
	require.True(t, errors.As(err, &se))
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), "libc.so.6 has no symbol cubehip_missing_a or cubehip_missing_b")
}

func TestResolveReportsEveryMissingSymbol(t *testing.T) {
	lib, err := Open("libc.so.6")
	require.NoError(t, err)
	var a, b, c unsafe.Pointer
	err = lib.Resolve([]Entry{{Names: []string{"malloc"}, Addr: &a}, {Names: []string{"nope_one"}, Addr: &b}, {Names: []string{"nope_two"}, Addr: &c}})
	require.Error(t, err)
	assert.NotNil(t, a)
	assert.Contains(t, err.Error(), "nope_one")
	assert.Contains(t, err.Error(), "nope_two")
}

func TestPathIsTheFileOpened(t *testing.T) {
	lib, err := Open("libc.so.6")
	require.NoError(t, err)
	p := lib.Path()
	require.True(t, filepath.IsAbs(p), "a library found on the search path is named by its file: %q", p)
	_, err = os.Stat(p)
	assert.NoError(t, err)
}
