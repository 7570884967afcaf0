package server_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// TestDiskCacheKeepsOptionSetsApart: one source compiled with two option sets (-DK=1,
// -DK=2) through one disk cache, by two Devices each time (the second finds the first's
// entries on disk): each option set gets its own kernel, whichever compiled first, and
// a cache keyed on the source alone would hand the second set the first's object.
func TestDiskCacheKeepsOptionSetsApart(t *testing.T) {
	const src = `extern "C" __global__ void k(unsigned* out) { out[threadIdx.x] = K; }`
	dir := t.TempDir()
	run := func(opt string) uint32 {
		d, _ := openDevice(t, server.Options{CacheDir: dir})
		k := server.DefineKernel(src, "k", server.Block(hipsys.Dim3{X: 1, Y: 1, Z: 1}), server.IO(server.Write),
			server.CompilerOptions(opt))
		out, err := d.Alloc(4)
		require.NoError(t, err)
		require.NoError(t, d.Call(k, hipsys.Dim3{X: 1, Y: 1, Z: 1}, out.Arg()))
		b, err := d.Read(out)
		require.NoError(t, err)
		return binary.LittleEndian.Uint32(b)
	}
	for round := range 2 { // the second round's Devices find both entries on disk
		for _, k := range []uint32{1, 2, 1} {
			require.Equal(t, k, run(fmt.Sprintf("-DK=%d", k)), "round %d, -DK=%d", round, k)
		}
	}
}
