package stream

import (
	"testing"
	"unsafe"
)

// TestStreamLayout holds the layout the launch path relies on: a Stream fills a
// 256-byte size class, so it starts on a cache line, and what every launch reads of it
// lies in its first line.
func TestStreamLayout(t *testing.T) {
	var s Stream
	if got := unsafe.Sizeof(s); got != 256 {
		t.Errorf("Stream is %d bytes, want 256: adjust its padding", got)
	}
	if end := unsafe.Offsetof(s.Capture) + unsafe.Sizeof(s.Capture.state); end > 64 {
		t.Errorf("the launch path's fields end at byte %d, past the first cache line", end)
	}
}
