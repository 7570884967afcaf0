package stream_test

import (
	"errors"
	"testing"

	"pgregory.net/rapid"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

// TestFailuresMatchModel runs random claim, release, taint and shed sequences against a
// plain map, so the lock-free fast paths (the size counter and the bit filter) can never
// answer "written" for a buffer that carries something.
func TestFailuresMatchModel(t *testing.T) {
	hb := newHostBuffers(t)
	pool := make([]stream.Binding, 300) // more ids than filter words, so bits collide
	for i := range pool {
		pool[i] = hb.binding(0, 16)
	}
	errs := []error{errBoom, errOther, errors.New("third")}

	rapid.Check(t, func(rt *rapid.T) {
		var f stream.Failures
		model := map[memory.ID]error{}
		pick := func(label string) []stream.Binding {
			idx := rapid.SliceOfN(rapid.IntRange(0, len(pool)-1), 0, 8).Draw(rt, label)
			bs := make([]stream.Binding, len(idx))
			for i, j := range idx {
				bs[i] = pool[j]
			}
			return bs
		}
		for range rapid.IntRange(1, 60).Draw(rt, "steps") {
			bs := pick("bindings")
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0:
				f.Claim(bs)
				for _, b := range bs {
					model[b.ID()] = stream.ErrUnsettled
				}
			case 1:
				f.Release(bs)
				for _, b := range bs {
					delete(model, b.ID())
				}
			case 2:
				e := errs[rapid.IntRange(0, len(errs)-1).Draw(rt, "err")]
				f.Taint(e, bs)
				for _, b := range bs {
					model[b.ID()] = e
				}
			case 3:
				ids := make([]memory.ID, len(bs))
				for i, b := range bs {
					ids[i] = b.ID()
					delete(model, b.ID())
				}
				f.Shed(ids...)
			case 4:
				var want error
				for _, b := range bs {
					if e, ok := model[b.ID()]; ok {
						want = e
						break
					}
				}
				if got := f.EnsureWritten(bs); got != want {
					rt.Fatalf("EnsureWritten = %v, model says %v", got, want)
				}
			}
			if f.Len() != len(model) {
				rt.Fatalf("Len = %d, model has %d", f.Len(), len(model))
			}
		}
	})
}
