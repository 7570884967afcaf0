package server_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// TestDeviceConcurrent drives one Device from many goroutines at once, each on its own
// stream or sharing one, with allocations, pipelined copies, launches, syncs, profiles,
// graphs and releases interleaved; run it with -race. Every goroutine checks its own
// results, so a lost serialization shows up as a wrong value as well as a race report.
func TestDeviceConcurrent(t *testing.T) {
	d, _ := openDevice(t, server.Options{StagingChunk: 16 << 10, StagingDepth: 2})
	require.NoError(t, d.Compile(devScale))
	require.NoError(t, d.Compile(devInc))
	cases := []struct {
		name   string
		stream func(g int) server.StreamID
	}{
		{"a stream each", func(g int) server.StreamID { return server.StreamID(g) }},
		{"one shared stream", func(int) server.StreamID { return 7 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const goroutines, rounds = 8, 20
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := concurrentWorker(d.On(c.stream(g)), g, rounds); err != nil {
						errs <- fmt.Errorf("goroutine %d: %w", g, err)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				assert.NoError(t, err)
			}
		})
	}
	u, err := d.MemoryUsage()
	require.NoError(t, err)
	assert.Zero(t, u.NumberAllocs, "every goroutine released what it allocated")
}

func concurrentWorker(s server.Stream, g, rounds int) error {
	n := 1000 + 37*g // several staging chunks, different per goroutine
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i + g)
	}
	in, err := s.Alloc(uint64(4 * n))
	if err != nil {
		return err
	}
	defer in.Release()
	if err := s.Write(in, floatBytes(xs...)); err != nil {
		return err
	}
	for r := range rounds {
		out, err := s.Alloc(uint64(4 * n))
		if err != nil {
			return err
		}
		a := float32(r + 1)
		args := server.LaunchArgs{Buffers: []*server.DeviceBuffer{in, out}, Scalars: []server.Scalar{server.F32(a), server.U32(uint32(n))}}
		if err := s.Launch(devScale, grid(n), args); err != nil {
			return err
		}
		if r%5 == 0 {
			if err := s.Sync(out); err != nil {
				return err
			}
		}
		if r%7 == 0 {
			if _, err := s.Profile(func() error { return s.Launch(devInc, grid(n), server.LaunchArgs{Buffers: []*server.DeviceBuffer{out}, Scalars: []server.Scalar{server.U32(uint32(n))}}) }); err != nil {
				return err
			}
			a2 := make([]byte, 4*n)
			if err := s.ReadInto(a2, out); err != nil {
				return err
			}
			if v := math.Float32frombits(binary.LittleEndian.Uint32(a2[4*(n-1):])); v != a*xs[n-1]+1 {
				return fmt.Errorf("round %d: profiled inc gave %v, want %v", r, v, a*xs[n-1]+1)
			}
		} else {
			got, err := s.Read(out)
			if err != nil {
				return err
			}
			for i, v := range byteFloats(got) {
				if v != a*xs[i] {
					return fmt.Errorf("round %d: out[%d] = %v, want %v", r, i, v, a*xs[i])
				}
			}
		}
		if err := out.Release(); err != nil {
			return err
		}
	}
	return nil
}

// TestDeviceConcurrentClose closes a Device while other goroutines use it: each call
// either completes or returns ErrClosed, and nothing crashes.
func TestDeviceConcurrentClose(t *testing.T) {
	d, _ := openDevice(t, server.Options{StagingChunk: 4 << 10})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := d.On(server.StreamID(g))
			for {
				b, err := s.Alloc(64 << 10)
				if err != nil {
					assert.ErrorIs(t, err, server.ErrClosed)
					return
				}
				werr := s.Write(b, make([]byte, 64<<10))
				_, rerr := s.Read(b)
				for _, err := range []error{werr, rerr} {
					if err != nil {
						assert.ErrorIs(t, err, server.ErrClosed)
					}
				}
				_ = b.Release()
			}
		}()
	}
	require.NoError(t, d.Close())
	wg.Wait()
}
