package nvidia

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRanges(t *testing.T) {
	var r ranges
	r.add(0x3000, 0x100)
	r.add(0x1000, 0x1000)
	for _, tc := range []struct {
		name string
		p, n uintptr
		want bool
	}{
		{"whole first", 0x1000, 0x1000, true},
		{"inside", 0x1800, 0x10, true},
		{"past the end", 0x1800, 0x1000, false},
		{"gap", 0x2800, 1, false},
		{"before all", 0x10, 1, false},
		{"second", 0x3000, 0x100, true},
		{"overflow", 0x3000, ^uintptr(0), false},
	} {
		assert.Equal(t, tc.want, r.contains(tc.p, tc.n), tc.name)
	}
	assert.False(t, r.remove(0x1800), "only an allocation's base frees it")
	assert.True(t, r.remove(0x1000))
	assert.False(t, r.remove(0x1000), "freed twice")
	assert.False(t, r.contains(0x1000, 1))
	assert.True(t, r.contains(0x3000, 1))
}

type handleSet interface {
	put(uintptr, int)
	get(uintptr) (int, bool)
	has(uintptr) bool
	take(uintptr) (int, bool)
}

func TestHandles(t *testing.T) {
	for name, h := range map[string]handleSet{"handles": &handles[int]{}, "hotHandles": &hotHandles[int]{}} {
		t.Run(name, func(t *testing.T) { testHandleSet(t, h) })
	}
}

func testHandleSet(t *testing.T, h handleSet) {
	assert.False(t, h.has(7), "empty")
	h.put(7, 70)
	v, ok := h.get(7)
	assert.True(t, ok)
	assert.Equal(t, 70, v)
	assert.True(t, h.has(7))
	_, ok = h.take(7)
	assert.True(t, ok)
	_, ok = h.take(7)
	assert.False(t, ok, "a second destroy finds nothing")
	assert.False(t, h.has(7))
}

func TestHandlesConcurrent(t *testing.T) {
	var h hotHandles[int]
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				k := uintptr(w*1000 + i)
				h.put(k, i)
				v, ok := h.get(k)
				assert.True(t, ok)
				assert.Equal(t, i, v)
				_, ok = h.take(k)
				assert.True(t, ok)
			}
		})
	}
	wg.Wait()
	assert.False(t, h.has(5))
}

// TestHotHandlesMemoNeverOutlivesTake: the last handle found is remembered, but a
// destroyed one must never pass a check again, however the check and the destroy
// interleave (a stale handle reaching the driver crashes the process).
func TestHotHandlesMemoNeverOutlivesTake(t *testing.T) {
	var h hotHandles[struct{}]
	h.put(7, struct{}{})
	h.put(8, struct{}{})
	assert.True(t, h.has(7))
	assert.True(t, h.has(7), "from the memo")
	assert.True(t, h.has(8), "another handle replaces the memo")
	_, ok := h.take(8)
	assert.True(t, ok)
	assert.False(t, h.has(8), "the memo went with its snapshot")
	assert.True(t, h.has(7))
	assert.False(t, h.has(0), "0 is never a handle, whatever the empty memo holds")

	for round := range 2000 {
		k := uintptr(100 + round)
		h.put(k, struct{}{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for range 20 {
				h.has(k)
			}
		})
		_, ok := h.take(k)
		assert.True(t, ok)
		wg.Wait()
		if h.has(k) {
			t.Fatalf("round %d: handle %d passes the check after its take", round, k)
		}
	}
}
