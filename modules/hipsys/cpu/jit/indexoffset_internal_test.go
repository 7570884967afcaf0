package jit

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The offset of a body's index from the global x index, in the spellings kernels use.
func TestIndexOffset(t *testing.T) {
	for _, tt := range []struct {
		body string
		want int
	}{
		{`int x = blockIdx.x * blockDim.x + threadIdx.x + 1; p[x] = 0;`, 1},
		{`const int x = threadIdx.x + blockIdx.x * blockDim.x - 2;`, -2},
		{`int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x + 16;`, 16},
		{`int y = blockIdx.y; int a = 3, x = blockDim.x * blockIdx.x + threadIdx.x + 4;`, 4},
		{`int x = blockIdx.x * blockDim.x + threadIdx.x;`, 0},              // the loop's own index already
		{`int x = blockIdx.x * blockDim.x + threadIdx.x + n;`, 0},          // not a constant
		{`int x = blockIdx.x * blockDim.x + threadIdx.x + 1 + n;`, 0},      // more than a constant
		{`int x = blockIdx.y * blockDim.y + threadIdx.y + 1;`, 0},          // another dimension
		{`unsigned int x = blockIdx.x * blockDim.x + threadIdx.x + 1;`, 0}, // an unsigned wraps
		{`long int x = blockIdx.x * blockDim.x + threadIdx.x + 1;`, 0},
		{`int x = blockIdx.x * blockDim.x + threadIdx.x + 100000;`, 0}, // past maxIndexOffset
	} {
		src := `extern "C" __global__ void k(int* p, int n) { ` + tt.body + ` }`
		toks := tokenize(src)
		b := scan(src).bodies[0]
		assert.Equal(t, tt.want, indexOffset(toks, b.openTok+1, b.closeTok), tt.body)
	}
}
