package jit_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// Several goroutines launch the same and different functions, loop and fiber kernels,
// small (inline) and large (pooled) grids, each on its own buffers.
func TestLaunchConcurrentSafe(t *testing.T) {
	basic, barrier := load(t, basicSource), load(t, barrierSource)
	vadd, reduce := function(t, basic, "vadd"), function(t, barrier, "reduce")
	const goroutines, rounds = 8, 20
	var wg sync.WaitGroup
	for g := range goroutines {
		n := 256 * (1 + g*40) // from one block (inline) to 281 blocks (pool)
		a, b, c := alloc[float32](t, n), alloc[float32](t, n), alloc[float32](t, n)
		sums := alloc[float32](t, n/256)
		for i := range n {
			a.s[i], b.s[i] = float32(g), float32(i%5)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var args hipsys.KernelArgs
			for r := range rounds {
				args.Reset().Ptr(a.dev()).Ptr(b.dev()).Ptr(c.dev()).U64(uint64(n))
				if !assert.NoError(t, vadd.Launch(dim(uint32(n/256), 1, 1), dim(256, 1, 1), 0, args.Buffer(), args.Offsets())) {
					return
				}
				args.Reset().Ptr(c.dev()).Ptr(sums.dev()).I32(int32(n))
				if !assert.NoError(t, reduce.Launch(dim(uint32(n/256), 1, 1), dim(256, 1, 1), 0, args.Buffer(), args.Offsets())) {
					return
				}
				for blk := range n / 256 {
					want := float32(0)
					for i := blk * 256; i < (blk+1)*256; i++ {
						want += float32(g) + float32(i%5)
					}
					if !assert.Equal(t, want, sums.s[blk], "goroutine %d round %d block %d", g, r, blk) {
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// Close waits for launches in flight and fails those that come after.
func TestCloseDuringLaunchesConcurrentSafe(t *testing.T) {
	img, _, err := compiler().Compile(basicSource, "test.hip", nil, nil)
	require.NoError(t, err)
	m, err := jit.Load(img)
	require.NoError(t, err)
	f := function(t, m, "empty")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				err := f.Launch(dim(64, 1, 1), dim(128, 1, 1), 0, nil, nil)
				if err != nil {
					assert.Equal(t, hipsys.ErrorInvalidHandle, statusOf(err))
					return
				}
			}
		}()
	}
	require.NoError(t, m.Close())
	wg.Wait()
}

func TestLaunchAllocatesNothing(t *testing.T) {
	f := function(t, load(t, basicSource), "saxpy")
	x, y := alloc[float32](t, 1024), alloc[float32](t, 1024)
	var args hipsys.KernelArgs
	args.F32(1).Ptr(x.dev()).Ptr(y.dev()).I32(1024)
	allocs := testing.AllocsPerRun(100, func() {
		if err := f.Launch(dim(4, 1, 1), dim(256, 1, 1), 0, args.Buffer(), args.Offsets()); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

// Goroutines compiling the same program share one compiler run and get equal images.
func TestCompileConcurrentSafe(t *testing.T) {
	c := jit.NewCompiler(t.TempDir())
	const src = `extern "C" __global__ void k(int* p) { p[threadIdx.x] = 3; }`
	images := make([][]byte, 4)
	var wg sync.WaitGroup
	for i := range images {
		wg.Add(1)
		go func() {
			defer wg.Done()
			img, log, err := c.Compile(src, "k.hip", nil, nil)
			assert.NoError(t, err, log)
			images[i] = img
		}()
	}
	wg.Wait()
	for _, img := range images[1:] {
		assert.Equal(t, images[0], img)
	}
	images[1][0] = 'X' // each caller owns its copy
	again, _, err := c.Compile(src, "k.hip", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, images[0], again)
}
