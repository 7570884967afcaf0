package main

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzABI drives the exported functions with handles (live, released, of another kind,
// made up, zero), sizes, offsets, counts, grids and NULLs the fuzzer picks. Every call
// must return a status the header defines or HIP's, with a message when it is not
// success, and never panic or hang; the device stays usable throughout. The corpus in
// testdata/fuzz/FuzzABI runs as a plain test in every `go test`.
func FuzzABI(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 11, 12, 13, 14, 15, 17, 18, 20, 21, 22, 23})
	f.Add([]byte{11, 0xff, 0x10, 0x20, 3, 4, 4, 4, 1, 1, 16, 16, 19, 19})
	f.Add([]byte{13, 11, 11, 4, 14, 15, 15, 16, 3, 14})
	f.Fuzz(func(t *testing.T, prog []byte) {
		// The last error is the OS thread's: each call and the read of its message must
		// run on one (lasterror_test.go).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		dev, s := abiOpen("cpu")
		require.EqualValues(t, 0, s)
		defer func() { require.EqualValues(t, 0, abiClose(dev)) }()
		fill, s := abiKernel(dev, `extern "C" __global__ void fill(unsigned* out, unsigned v) { out[threadIdx.x] = v; }`, "fill", []int32{2}, 4)
		require.EqualValues(t, 0, s)
		var bufs []uint64 // live and released buffer ids: the fuzzer picks among them
		bufs = append(bufs, 0, dev, fill, 0x0200000100000000, ^uint64(0))
		next := func(i *int) uint64 {
			if *i >= len(prog) {
				return 0
			}
			v := uint64(prog[*i])
			*i++
			return v
		}
		for i := 0; i < len(prog) && i < 256; {
			op := byte(next(&i))
			h1 := bufs[int(next(&i))%len(bufs)]
			h2 := bufs[int(next(&i))%len(bufs)]
			n1 := next(&i) << (next(&i) % 64)
			n2 := next(&i)
			var data []byte
			if k := next(&i); k%5 != 0 {
				data = make([]byte, k*4)
			}
			var words []uint64
			for j := next(&i) % 6; j > 0; j-- {
				var w [8]byte
				for b := range w {
					w[b] = byte(next(&i))
				}
				words = append(words, binary.LittleEndian.Uint64(w[:]))
			}
			stream := next(&i) % 4
			if op%25 == 0 {
				n1 %= 1 << 20 // allocations the machine can give: the fuzzer is not testing out-of-memory
			}
			st := abiCall(op, h1, h2, n1, n2, data, words, stream)
			name := abiStatusName(st)
			require.NotEqual(t, "unknown status", name, "op %d returned status %d", op%25, int32(st))
			if st != 0 {
				require.NotEmpty(t, lastError(), "op %d: %s without a message", op%25, name)
			}
			if op%25 == 0 && st == 0 {
				// Learn the new buffer's id: it is the most recent buffer handle.
				bufs = append(bufs, newestHandle())
			}
		}
		// Whatever happened, the device still works: a fresh buffer round-trips. An
		// open capture the fuzzer left is ended first.
		abiCall(14, dev, 0, 0, 0, nil, nil, 0)
		abiCall(14, dev, 0, 0, 0, nil, nil, 1)
		abiCall(14, dev, 0, 0, 0, nil, nil, 2)
		abiCall(14, dev, 0, 0, 0, nil, nil, 3)
		require.EqualValues(t, 0, abiCall(0, dev, 0, 16, 0, nil, nil, 0), "%s", lastError())
		b := newestHandle()
		in := []byte("0123456789abcdef")
		require.EqualValues(t, 0, abiCall(3, b, 0, 0, 16, in, nil, 0), "%s", lastError())
		out := make([]byte, 16)
		require.EqualValues(t, 0, abiCall(4, b, 0, 0, 16, out, nil, 0), "%s", lastError())
		require.Equal(t, in, out)
	})
}
