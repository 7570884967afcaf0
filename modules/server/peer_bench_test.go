package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkCopyFrom holds a 256 MiB copy between two cpu devices to the host's memcpy
// rate, measured in the same run (the anchor): the devices share the host's memory, so
// memcpy is what a copy between them can reach. The budget is at least 0.8× the anchor
// (compare the two MB/s figures).
func BenchmarkCopyFrom(b *testing.B) {
	const n = 256 << 20
	b.Run("anchor host memcpy", func(b *testing.B) {
		src, dst := make([]byte, n), make([]byte, n)
		for i := range src {
			src[i] = byte(i)
		}
		copy(dst, src) // fault in every page first
		b.SetBytes(n)
		b.ResetTimer()
		for range b.N {
			copy(dst, src)
		}
	})
	b.Run("cpu device to device", func(b *testing.B) {
		ds, _ := openCPUDevicesB(b, 2)
		a, err := ds[0].Alloc(n)
		require.NoError(b, err)
		defer a.Release()
		c, err := ds[1].Alloc(n)
		require.NoError(b, err)
		defer c.Release()
		require.NoError(b, ds[0].Write(a, pattern(1, n)))
		require.NoError(b, ds[1].CopyFrom(c, a))
		require.NoError(b, ds[1].Sync())
		b.SetBytes(n)
		b.ResetTimer()
		for range b.N {
			if err := ds[1].CopyFrom(c, a); err != nil {
				b.Fatal(err)
			}
			if err := ds[1].Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
