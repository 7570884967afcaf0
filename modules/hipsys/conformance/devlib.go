package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The device library's constructs that real HIP and CUDA code uses, each in a corpus
// source of its own and checked against what the HIP and CUDA programming guides say it
// does.
var deviceLibraryChecks = map[string]func(t *testing.T, c *corpusRun){
	"shared_type_first": func(t *testing.T, c *corpusRun) {
		const block, n = 64, 64*3 - 5
		in := make([]float32, n)
		for i := range in {
			in[i] = float32(i) + 0.5
		}
		out := c.s.zeros(t, 4*n)
		var args hipsys.KernelArgs
		args.Ptr(up(t, c, in)).Ptr(out).I32(n)
		c.s.launch(t, c.fn(t, "reverse_blocks"), d1((n+block-1)/block), d1(block), 4*block, 0, &args)
		got := down[float32](t, c, out, n)
		for j := range n {
			b, k := j/block, j%block
			src := b*block + block - 1 - k // the thread that wrote element j read in[src]
			want := float32(0)
			if src < n {
				want = in[src]
			}
			require.Equal(t, want, got[j], "element %d", j)
		}

		const m = 96
		u := make([]uint32, 2*m)
		for i := range u {
			u[i] = uint32(i * 3)
		}
		dout := c.s.zeros(t, 4*2*m)
		args.Reset().Ptr(up(t, c, u)).Ptr(dout)
		c.s.launch(t, c.fn(t, "rotate_left"), d1(2), d1(m), 4*m, 0, &args)
		gotU := down[uint32](t, c, dout, 2*m)
		for b := range 2 {
			for k := range m {
				require.Equal(t, u[b*m+(k+1)%m], gotU[b*m+k], "block %d thread %d", b, k)
			}
		}
	},
}
