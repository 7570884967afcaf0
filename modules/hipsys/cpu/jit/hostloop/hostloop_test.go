package hostloop

import (
	"os/exec"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompileAndRun builds a loop with the kernels' compiler and runs it on a Go
// slice's data, as cubehip bench runs its anchors.
func TestCompileAndRun(t *testing.T) {
	if _, err := exec.LookPath("c++"); err != nil {
		if _, err := exec.LookPath("g++"); err != nil {
			t.Skip("no C++ compiler")
		}
	}
	loop, err := Compile(`extern "C" void loop(void* a, void* b, void* c, int64_t n, int64_t m) {
	int32_t* x = (int32_t*)a;
	for (int64_t i = 0; i < n; i++) x[i] += (int32_t)(i * m);
}`, "loop")
	require.NoError(t, err)
	xs := []int32{1, 1, 1, 1}
	loop.Run(unsafe.Pointer(&xs[0]), nil, nil, int64(len(xs)), 3)
	assert.Equal(t, []int32{1, 4, 7, 10}, xs)

	_, err = Compile(`extern "C" void other(void*, void*, void*, int64_t, int64_t) {}`, "loop")
	assert.ErrorContains(t, err, "no function of that name", "a name the object lacks")
	_, err = Compile(`this is not C++`, "loop")
	assert.ErrorContains(t, err, "compiling the host loop")
}
