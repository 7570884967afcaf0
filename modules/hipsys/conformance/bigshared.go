package conformance

import (
	"testing"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// largeShared: a launch asking for 100 KiB of dynamic shared memory per block, over
// NVIDIA's default 48 KiB and within its opt-in limit (and the cpu device's), gets it
// and computes the right answer. Devices whose blocks cannot have that much (AMD's 64
// KiB of LDS) skip, saying so.
func (s *suite) largeShared(t *testing.T) {
	const shared = 100 << 10
	if limit := max(s.props.SharedMemPerBlockOptin, s.props.SharedMemPerBlock); limit < shared {
		t.Skipf("%s gives a block at most %d bytes of shared memory", s.props.Name, limit)
	}
	const words, blocks = shared / 4, 6
	in := ramp(words*blocks, 0.25, -3)
	din, dout := s.upload(t, f32Bytes(in)), s.zeros(t, 4*words*blocks)
	s.launch(t, s.function(t, "bigshared", "shared_window"), dim(blocks, 1), dim(256, 1), shared, hipsys.NullStream,
		new(hipsys.KernelArgs).Ptr(din).Ptr(dout).U32(words))
	got := bytesF32(s.download(t, dout, 4*words*blocks))
	for b := range blocks {
		for i := range words {
			if want := 2 * in[b*words+words-1-i]; got[b*words+i] != want {
				t.Fatalf("block %d, element %d: got %v, want %v", b, i, got[b*words+i], want)
			}
		}
	}
}
