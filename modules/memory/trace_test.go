package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/memory/memorytest"
)

// traceOp is one step of a replayed allocation trace: allocate Size bytes
// under Key, or free Key.
type traceOp struct {
	Free bool
	Key  int
	Size uint64
}

// transformerTrace is a training step of a GPT-like model in bf16: weights
// and Adam state allocated once, then per step a forward pass that keeps
// activations for the backward pass and frees temporaries at once, a
// backward pass in reverse that frees each layer's activations and keeps
// the weight gradients, and an optimizer step with small temporaries.
// Odd sizes (biases, norms, the 3,145,733-byte buffer of the graph tests)
// keep it from being all powers of two.
func transformerTrace(steps int) []traceOp {
	const (
		layers = 12
		d      = 1024
		heads  = 16
		seq    = 512
		batch  = 8
		tokens = seq * batch
		bf16   = 2
		fp32   = 4
		vocab  = 50257
	)
	var ops []traceOp
	next := 0
	alloc := func(size uint64) int {
		next++
		ops = append(ops, traceOp{Key: next, Size: size})
		return next
	}
	free := func(keys ...int) {
		for _, k := range keys {
			ops = append(ops, traceOp{Free: true, Key: k})
		}
	}
	type layer struct{ wqkv, wo, wup, wdown, bias, norm int }
	params := make([]layer, layers)
	var states []int
	for i := range params {
		params[i] = layer{
			wqkv: alloc(d * 3 * d * bf16), wo: alloc(d * d * bf16),
			wup: alloc(d * 4 * d * bf16), wdown: alloc(4 * d * d * bf16),
			bias: alloc(9 * d * bf16), norm: alloc(2 * d * fp32),
		}
		for range 2 { // Adam moments in fp32
			states = append(states, alloc(12*d*d*fp32), alloc(9*d*fp32+2*d*fp32))
		}
	}
	embed := alloc(vocab * d * bf16)
	for range steps {
		input := alloc(tokens * 4)
		saved := make([][]int, layers)
		for l := range layers {
			ln := alloc(tokens * d * bf16)
			stats := alloc(tokens * 2 * fp32)
			qkv := alloc(tokens * 3 * d * bf16)
			scores := alloc(batch * heads * seq * seq * bf16)
			probs := alloc(batch * heads * seq * seq * bf16)
			free(scores)
			attn := alloc(tokens * d * bf16)
			proj := alloc(tokens * d * bf16)
			up := alloc(tokens * 4 * d * bf16)
			act := alloc(tokens * 4 * d * bf16)
			down := alloc(tokens * d * bf16)
			odd := alloc(3145733)
			free(odd, proj)
			saved[l] = []int{ln, stats, qkv, probs, attn, up, act, down}
		}
		logits := alloc(tokens * vocab * bf16)
		loss := alloc(fp32)
		grad := alloc(tokens * vocab * bf16)
		free(logits)
		var wgrads []int
		dx := alloc(tokens * d * bf16)
		free(grad)
		for l := layers - 1; l >= 0; l-- {
			dup := alloc(tokens * 4 * d * bf16)
			dact := alloc(tokens * 4 * d * bf16)
			wgrads = append(wgrads, alloc(4*d*d*bf16), alloc(d*4*d*bf16))
			free(dup)
			dprobs := alloc(batch * heads * seq * seq * bf16)
			dscores := alloc(batch * heads * seq * seq * bf16)
			free(dprobs)
			dqkv := alloc(tokens * 3 * d * bf16)
			free(dscores)
			wgrads = append(wgrads, alloc(d*3*d*bf16), alloc(d*d*bf16), alloc(9*d*bf16), alloc(2*d*fp32))
			ndx := alloc(tokens * d * bf16)
			free(dact, dqkv, dx)
			free(saved[l]...)
			dx = ndx
		}
		free(dx, input, loss)
		for _, g := range wgrads { // optimizer: a temporary per tensor
			tmp := alloc(d * d * fp32)
			free(tmp, g)
		}
	}
	for _, l := range params {
		free(l.wqkv, l.wo, l.wup, l.wdown, l.bias, l.norm)
	}
	free(states...)
	free(embed)
	return ops
}

type traceResult struct {
	peakReserved, peakInUse uint64
}

func replay(tb testing.TB, m *memory.Manager, ops []traceOp) traceResult {
	live := make(map[int]memory.Handle)
	var r traceResult
	for _, op := range ops {
		if op.Free {
			h := live[op.Key]
			require.NoError(tb, h.Release())
			delete(live, op.Key)
			continue
		}
		h, err := m.Reserve(op.Size)
		require.NoError(tb, err)
		live[op.Key] = h
		u := m.Usage()
		r.peakReserved = max(r.peakReserved, u.BytesReserved)
		r.peakInUse = max(r.peakInUse, u.BytesInUse)
	}
	require.Empty(tb, live)
	return r
}

var h200 = memory.DeviceProps{MemoryTotal: 141 * gib, Alignment: 256}

var traceLayouts = []struct {
	name   string
	layout memory.Layout
}{
	{"SubSlices", memory.Layout{Preset: memory.SubSlices}},
	{"ExclusivePages", memory.Layout{Preset: memory.ExclusivePages}},
	{"Sliced256MiB+Direct", memory.Explicit(
		memory.ExclusiveSpec{},
		memory.SlicedSpec{PageSize: 256 * mib, MaxSliceSize: 128 * mib},
		memory.DirectSpec{},
	)},
}

// BenchmarkTrace replays three steps of the transformer trace per
// iteration and reports the peak reserved bytes over the peak bytes in use,
// so layouts can be compared (1.0 is perfect).
func BenchmarkTrace(b *testing.B) {
	ops := transformerTrace(3)
	for _, tl := range traceLayouts {
		b.Run(tl.name, func(b *testing.B) {
			var r traceResult
			for b.Loop() {
				m, err := memory.New(memorytest.New(), h200, memory.WithLayout(tl.layout), memory.WithLogger(quiet))
				require.NoError(b, err)
				r = replay(b, m, ops)
			}
			b.ReportMetric(float64(r.peakReserved)/float64(r.peakInUse), "reserved/in-use")
			b.ReportMetric(float64(r.peakInUse)/mib, "peak-in-use-MiB")
			b.ReportMetric(float64(r.peakReserved)/mib, "peak-reserved-MiB")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ops)), "ns/op-in-trace")
		})
	}
}

func TestTraceReplays(t *testing.T) {
	ops := transformerTrace(2)
	for _, tl := range traceLayouts {
		t.Run(tl.name, func(t *testing.T) {
			st := memorytest.New()
			m, err := memory.New(st, h200, memory.WithLayout(tl.layout), memory.WithLogger(quiet))
			require.NoError(t, err)
			r := replay(t, m, ops)
			assert.GreaterOrEqual(t, r.peakReserved, r.peakInUse)
			assert.Equal(t, uint64(0), m.Usage().NumberAllocs)
			m.Cleanup()
			assert.Equal(t, 0, st.Live(), "an explicit cleanup gives everything back")
			t.Logf("%s: peak reserved %.0f MiB / in use %.0f MiB = %.3f", tl.name,
				float64(r.peakReserved)/mib, float64(r.peakInUse)/mib, float64(r.peakReserved)/float64(r.peakInUse))
		})
	}
}
