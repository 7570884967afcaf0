package compute

import (
	"testing"
)

// BenchmarkHostCopyChunks is the host side of a 256 MiB staged copy alone: 32 chunks of
// 8 MiB copied one after another, each split over the cores by a goroutine per part
// (copyParallel) or by a team kept for the transfer, and on one goroutine.
func BenchmarkHostCopyChunks(b *testing.B) {
	const total, chunk = 256 << 20, 8 << 20
	src := make([]byte, total)
	for i := range src {
		src[i] = byte(i)
	}
	dst := make([]byte, total)
	copy(dst, src)
	run := func(b *testing.B, each func(dst, src []byte), team func() *copyTeam) {
		b.SetBytes(total)
		for b.Loop() {
			t := team()
			for lo := 0; lo < total; lo += chunk {
				if t != nil {
					t.copy(dst[lo:lo+chunk], src[lo:lo+chunk])
				} else {
					each(dst[lo:lo+chunk], src[lo:lo+chunk])
				}
			}
			t.close()
		}
	}
	none := func() *copyTeam { return nil }
	b.Run("one", func(b *testing.B) { run(b, func(d, s []byte) { copy(d, s) }, none) })
	b.Run("spawn", func(b *testing.B) { run(b, copyParallel, none) })
	b.Run("team", func(b *testing.B) { run(b, nil, func() *copyTeam { return newCopyTeam(total, chunk) }) })
}
