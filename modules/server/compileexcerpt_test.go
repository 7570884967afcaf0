package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// A mistake on an entry's signature line is shown with the user's own line as its
// excerpt and the caret under the mistake, as on any other line: the cpu device compiles
// that line with its thread loop appended, which the excerpt must not show.
func TestCompileErrorOnTheSignatureLineQuotesTheUsersLine(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	if d.Platform() != "cpu" {
		t.Skipf("the excerpt is the cpu device's compiler's (g++); %s's compiler words its own", d.Platform())
	}
	const sig = `extern "C" __global__ void bad(int n, flot* y) {`
	k := server.NewKernel("#include <hip/hip_runtime.h>\n"+sig+"\n    y[0] = n;\n}\n", "bad", server.Dim3{X: 1}, nil)
	err := d.Compile(k)
	require.ErrorIs(t, err, server.ErrCompilation)
	msg := err.Error()
	assert.Contains(t, msg, "bad.hip:2:39: error:", "line 2, column 39: where flot is")
	assert.Contains(t, msg, "2 | "+sig+"\n", "the user's line, and nothing after it")
	assert.Regexp(t, `\| {39}\^`, msg, "the caret under column 39 (the bar, a space, 38 columns)")
}
