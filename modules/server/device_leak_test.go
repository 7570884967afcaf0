package server_test

import (
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// liveCounts wraps a platform and counts what it holds for its caller: streams, events,
// device and pinned allocations, modules, graphs and executable graphs, each created
// minus destroyed.
type liveCounts struct {
	hipsys.Platform
	mu   sync.Mutex
	live map[string]int
}

func countLive(p hipsys.Platform) *liveCounts {
	return &liveCounts{Platform: p, live: map[string]int{}}
}

func (c *liveCounts) add(kind string, n int, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	c.live[kind] += n
	c.mu.Unlock()
}

// held is every kind still held, with its count.
func (c *liveCounts) held() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, n := range c.live {
		if n != 0 {
			out[k] = n
		}
	}
	return out
}

func (c *liveCounts) StreamCreateWithFlags(f hipsys.StreamFlags) (hipsys.Stream, error) {
	s, err := c.Platform.StreamCreateWithFlags(f)
	c.add("stream", 1, err)
	return s, err
}

func (c *liveCounts) StreamDestroy(s hipsys.Stream) error {
	err := c.Platform.StreamDestroy(s)
	c.add("stream", -1, err)
	return err
}

func (c *liveCounts) EventCreateWithFlags(f hipsys.EventFlags) (hipsys.Event, error) {
	e, err := c.Platform.EventCreateWithFlags(f)
	c.add("event", 1, err)
	return e, err
}

func (c *liveCounts) EventDestroy(e hipsys.Event) error {
	err := c.Platform.EventDestroy(e)
	c.add("event", -1, err)
	return err
}

func (c *liveCounts) Malloc(n uint64) (hipsys.DevicePtr, error) {
	p, err := c.Platform.Malloc(n)
	if p != 0 {
		c.add("device memory", 1, err)
	}
	return p, err
}

func (c *liveCounts) Free(p hipsys.DevicePtr) error {
	err := c.Platform.Free(p)
	if p != 0 {
		c.add("device memory", -1, err)
	}
	return err
}

func (c *liveCounts) HostMalloc(n uint64, f hipsys.HostMallocFlags) (hipsys.HostPtr, error) {
	p, err := c.Platform.HostMalloc(n, f)
	c.add("pinned memory", 1, err)
	return p, err
}

func (c *liveCounts) HostFree(p hipsys.HostPtr) error {
	err := c.Platform.HostFree(p)
	c.add("pinned memory", -1, err)
	return err
}

func (c *liveCounts) ModuleLoadData(image []byte) (hipsys.Module, error) {
	m, err := c.Platform.ModuleLoadData(image)
	c.add("module", 1, err)
	return m, err
}

func (c *liveCounts) ModuleUnload(m hipsys.Module) error {
	err := c.Platform.ModuleUnload(m)
	c.add("module", -1, err)
	return err
}

func (c *liveCounts) StreamEndCapture(s hipsys.Stream) (hipsys.Graph, error) {
	g, err := c.Platform.StreamEndCapture(s)
	c.add("graph", 1, err)
	return g, err
}

func (c *liveCounts) GraphDestroy(g hipsys.Graph) error {
	err := c.Platform.GraphDestroy(g)
	c.add("graph", -1, err)
	return err
}

func (c *liveCounts) GraphInstantiate(g hipsys.Graph) (hipsys.GraphExec, error) {
	e, err := c.Platform.GraphInstantiate(g)
	c.add("executable graph", 1, err)
	return e, err
}

func (c *liveCounts) GraphExecDestroy(e hipsys.GraphExec) error {
	err := c.Platform.GraphExecDestroy(e)
	c.add("executable graph", -1, err)
	return err
}

// Close gives back everything the device took: after cycles of Open, real work on
// several streams (copies through both kinds of staging, launches, a graph, a profile,
// buffers left unreleased) and Close, the platform holds nothing for it and no
// goroutine is left behind.
func TestDeviceCloseReturnsEverything(t *testing.T) {
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	c := countLive(p)
	before := 0
	for cycle := range 4 {
		if cycle == 1 {
			// Counted after a first cycle: what the process starts once (the cpu
			// platform's compiler, the runtime's own) is not the device's.
			before = runtime.NumGoroutine()
		}
		d, err := server.OpenPlatform(c, server.Options{Logger: slog.New(slog.DiscardHandler), StagingChunk: 1 << 10})
		require.NoError(t, err)
		x := upload(t, d.Stream, 1, 2, 3, 4)
		for id := range server.StreamID(3) {
			s := d.On(id)
			y := alloc(t, s, 16)
			require.NoError(t, s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}}))
			big := alloc(t, s, 8<<10)
			require.NoError(t, s.Write(big, make([]byte, 8<<10)))
			_, err := s.Read(big)
			require.NoError(t, err)
			assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, s, y))
			if id == 1 {
				require.NoError(t, y.Release()) // the others are left to Close
			}
		}
		g, err := d.Capture(func(s server.Stream) error {
			return s.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(4)}})
		})
		require.NoError(t, err)
		require.NoError(t, g.Replay())
		_, err = d.Profile(func() error { return g.Replay() })
		require.NoError(t, err)
		_, err = d.On(2).StartProfile() // left open
		require.NoError(t, err)
		require.NoError(t, d.Close())
		assert.Empty(t, c.held(), "cycle %d: held after Close", cycle)
	}
	// The goroutines a device started end with its Close (give them a moment to exit).
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines after 3 more cycles") {
		buf := make([]byte, 1<<20)
		t.Log(string(buf[:runtime.Stack(buf, true)]))
	}
}
