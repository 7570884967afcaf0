package server_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
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
		args := server.Args{Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(a), server.U32(uint32(n))}}
		if err := s.Launch(devScale, grid(n), args); err != nil {
			return err
		}
		if r%5 == 0 {
			if err := s.Sync(out); err != nil {
				return err
			}
		}
		if r%7 == 0 {
			if _, err := s.Profile(func() error {
				return s.Launch(devInc, grid(n), server.Args{Buffers: []*server.Buffer{out}, Scalars: []server.Scalar{server.U32(uint32(n))}})
			}); err != nil {
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
	var wg, started sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		started.Add(1)
		go func() {
			defer wg.Done()
			s := d.On(server.StreamID(g))
			for i := 0; ; i++ {
				if i == 1 {
					started.Done() // a whole round ran: Close now lands mid-work
				}
				b, err := s.Alloc(64 << 10)
				if err != nil {
					assert.ErrorIs(t, err, server.ErrClosed)
					if i == 0 {
						started.Done()
					}
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
	started.Wait()
	require.NoError(t, d.Close())
	wg.Wait()
}

// spinSource keeps one device thread busy for n iterations: a stream that is long busy,
// whatever the platform.
var devSpin = server.NewKernel(`extern "C" __global__ void dev_spin(float* out, unsigned long long n) {
    volatile float acc = 0.0f;
    for (unsigned long long i = 0; i < n; i++) acc = acc + 1.0f;
    out[0] = acc;
}`, "dev_spin", hipsys.Dim3{X: 1, Y: 1, Z: 1}, []server.Access{server.Write})

// TestDeviceWaitsOutsideTheLock holds one goroutine in a Sync of a long-busy stream
// while another allocates, copies, launches and reads on another stream: the second must
// finish first, which it cannot if the wait held the device's lock.
func TestDeviceWaitsOutsideTheLock(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	busy, other := d.On(1), d.On(2)
	out := alloc(t, busy, 4)
	require.NoError(t, d.Compile(devScale)) // no compile inside what is timed
	require.NoError(t, d.Compile(devSpin))
	spin := func(n uint64) time.Duration {
		t0 := time.Now()
		require.NoError(t, busy.Launch(devSpin, hipsys.Dim3{X: 1, Y: 1, Z: 1}, server.Args{Buffers: []*server.Buffer{out}, Scalars: []server.Scalar{server.U64(n)}}))
		require.NoError(t, busy.Sync())
		return time.Since(t0)
	}
	// Calibrate: long enough that the other goroutine's work is well inside it.
	n := uint64(1 << 20)
	for spin(n) < 200*time.Millisecond && n < 1<<40 {
		n *= 4
	}

	require.NoError(t, busy.Launch(devSpin, hipsys.Dim3{X: 1, Y: 1, Z: 1}, server.Args{Buffers: []*server.Buffer{out}, Scalars: []server.Scalar{server.U64(n)}}))
	waiting := make(chan struct{})
	synced := make(chan time.Time, 1)
	go func() {
		close(waiting)
		assert.NoError(t, busy.Sync())
		synced <- time.Now()
	}()
	<-waiting
	time.Sleep(10 * time.Millisecond) // let the Sync reach its wait
	x := upload(t, other, 1, 2, 3)
	y := alloc(t, other, 12)
	require.NoError(t, other.Launch(devScale, grid(3), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(3)}}))
	assert.Equal(t, []float32{2, 4, 6}, readFloats(t, other, y))
	done := time.Now()
	end := <-synced
	t.Logf("spin of %d iterations; other stream done %v before the sync returned", n, end.Sub(done))
	assert.True(t, done.Before(end), "the other stream's work finished while the Sync waited")
}
