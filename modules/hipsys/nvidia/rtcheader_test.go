package nvidia

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// AMD's HIP headers give device code uchar, ushort, uint, ulong and ullong; a kernel
// written against them must compile under NVRTC too, which defines none of them. The
// header text is checked here because this test runs on machines without NVRTC; the
// conformance suite's "short type names" kernel compiles it on a GPU machine.
func TestRuntimeHeaderDefinesAMDsShortTypeNames(t *testing.T) {
	for _, want := range []string{
		"typedef unsigned char uchar;",
		"typedef unsigned short ushort;",
		"typedef unsigned int uint;",
		"typedef unsigned long ulong;",
		"typedef unsigned long long ullong;",
	} {
		assert.Contains(t, hipRuntimeHeader, want)
	}
}
