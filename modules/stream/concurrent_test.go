package stream_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// TestMultiStreamConcurrentSafeDistinctStreams drives distinct streams from distinct
// goroutines, sharing the failure store, the write order and the release worker: each
// writes its own buffer, reads a shared buffer homed on stream 0 (cross-stream pins and
// waits), fails one write in a few rounds, and checks what it reads. Run with -race.
func TestMultiStreamConcurrentSafeDistinctStreams(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p, stream.WithMaxStreams(8))
	const workers, rounds, n = 4, 20, 4096
	shared := newDeviceBuffer(t, m, 0, n)
	require.NoError(t, upload(m, 0, shared, pinned(t, p, bytes.Repeat([]byte{0xee}, n)), n))

	own := make([]*deviceBuffer, workers)
	srcs := make([]hipsys.HostPtr, workers)
	for w := range workers {
		own[w] = newDeviceBuffer(t, m, stream.ID(w+1), n)
		srcs[w] = pinned(t, p, bytes.Repeat([]byte{byte(w + 1)}, n))
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := stream.ID(w + 1)
			for r := range rounds {
				if err := upload(m, id, own[w], srcs[w], n); err != nil {
					errs <- err
					return
				}
				got, err := download(t, m, id, own[w], n)
				if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{byte(w + 1)}, n)) {
					errs <- fmt.Errorf("worker %d round %d: own buffer: %v", w, r, err)
					return
				}
				got, err = download(t, m, id, shared, n)
				if err != nil || got[0] != 0xee || got[n-1] != 0xee {
					errs <- fmt.Errorf("worker %d round %d: shared buffer: %v", w, r, err)
					return
				}
				if r%5 == 0 {
					// A failure on this stream's buffer is visible to everyone, and the
					// next write heals it.
					m.Taint(errBoom, own[w].b)
					if err := m.EnsureWritten(own[w].b); err == nil {
						errs <- fmt.Errorf("worker %d: taint not visible", w)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	s0, err := m.Stream(0)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	assert.Equal(t, uint64(1), s0.GPU.Usage().NumberAllocs, "every cross-stream pin of the shared buffer was released")
}

func TestMultiStreamConcurrentSafeCreation(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p, stream.WithMaxStreams(4))
	var wg sync.WaitGroup
	got := make([]*stream.Stream, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := m.Stream(stream.ID(i))
			assert.NoError(t, err)
			got[i] = s
		}()
	}
	wg.Wait()
	for i := range got {
		assert.Same(t, got[i%4], got[i], "one stream per slot, however many raced to create it")
	}
	assert.Len(t, m.StreamIDs(), 4)
}
