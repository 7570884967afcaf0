package nvidia

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestDeviceProperties(t *testing.T) {
	p := device(t)
	pr, err := p.GetDeviceProperties(0)
	require.NoError(t, err)
	t.Logf("%+v", pr)
	assert.NotEmpty(t, pr.Name)
	assert.Equal(t, fmt.Sprintf("sm_%d%d", pr.Major, pr.Minor), pr.ArchName)
	assert.Equal(t, 32, pr.WarpSize)
	assert.Positive(t, pr.MultiProcessorCount)
	assert.Positive(t, pr.TotalMem)
	assert.GreaterOrEqual(t, pr.MaxThreadsPerBlock, 1024)
	assert.Equal(t, 1024, pr.MaxThreadsDim[0])
	assert.GreaterOrEqual(t, pr.MaxGridSize[0], 1<<31-1)
	assert.GreaterOrEqual(t, pr.SharedMemPerBlock, uint64(48<<10))
	assert.Positive(t, pr.L2CacheSize)

	free, total, err := p.MemGetInfo()
	require.NoError(t, err)
	assert.Positive(t, free)
	assert.LessOrEqual(t, free, total)
	assert.Equal(t, pr.TotalMem, total)

	_, err = p.GetDeviceProperties(-1)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidDevice)
	assert.ErrorIs(t, p.SetDevice(1<<20), hipsys.ErrorInvalidDevice)
}

func TestMemoryRoundTrips(t *testing.T) {
	p := device(t)
	const n = 1 << 20
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i * 7)
	}
	a, err := p.Malloc(n)
	require.NoError(t, err)
	defer p.Free(a)
	b, err := p.Malloc(n)
	require.NoError(t, err)
	defer p.Free(b)

	require.NoError(t, p.MemcpyHtoD(a, src))
	require.NoError(t, p.MemcpyDtoD(b, a, n))
	got := make([]byte, n)
	require.NoError(t, p.MemcpyDtoH(got, b))
	assert.True(t, bytes.Equal(src, got), "sync HtoD, DtoD, DtoH")

	require.NoError(t, p.Memset(b+16, 0xab, 32))
	require.NoError(t, p.MemcpyDtoH(got[:64], b))
	assert.Equal(t, bytes.Repeat([]byte{0xab}, 32), got[16:48])

	st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer p.StreamDestroy(st)
	hin, err := p.HostMalloc(n, hipsys.HostMallocDefault)
	require.NoError(t, err)
	defer p.HostFree(hin)
	hout, err := p.HostMalloc(n, hipsys.HostMallocPortable)
	require.NoError(t, err)
	defer p.HostFree(hout)
	copy(hin.Bytes(n), src)
	require.NoError(t, p.MemcpyHtoDAsync(a, hin, n, st))
	require.NoError(t, p.MemsetAsync(b, 0, n, st))
	require.NoError(t, p.MemcpyDtoDAsync(b, a, n, st))
	require.NoError(t, p.MemcpyDtoHAsync(hout, b, n, st))
	require.NoError(t, p.StreamSynchronize(st))
	assert.True(t, bytes.Equal(src, hout.Bytes(n)), "async pinned copies in stream order")

	// A pitched copy: 4 rows of 32 bytes from pitch 64 (host) to pitch 128 (device) and back.
	require.NoError(t, p.Memset(a, 0, 4*128))
	c := hipsys.Copy2D{Dst: uintptr(a), DstPitch: 128, Src: uintptr(hin), SrcPitch: 64, Width: 32, Height: 4, Kind: hipsys.MemcpyHostToDevice}
	require.NoError(t, p.Memcpy2D(c))
	back := hipsys.Copy2D{Dst: uintptr(hout), DstPitch: 32, Src: uintptr(a), SrcPitch: 128, Width: 32, Height: 4, Kind: hipsys.MemcpyDefault}
	require.NoError(t, p.Memcpy2DAsync(back, st))
	require.NoError(t, p.StreamSynchronize(st))
	for r := range 4 {
		assert.Equal(t, src[r*64:r*64+32], hout.Bytes(n)[r*32:r*32+32], "row %d", r)
	}
}

func TestMemoryErrors(t *testing.T) {
	p := device(t)
	_, err := p.Malloc(1 << 62)
	assert.ErrorIs(t, err, hipsys.ErrorOutOfMemory)
	assert.ErrorContains(t, err, "CUDA_ERROR_OUT_OF_MEMORY")
	assert.ErrorIs(t, p.HostFree(0x1234), hipsys.ErrorInvalidValue)

	h, err := p.HostMalloc(64, 0)
	require.NoError(t, err)
	a, err := p.Malloc(64)
	require.NoError(t, err)
	defer p.Free(a)
	assert.ErrorIs(t, p.MemcpyHtoDAsync(a, h+32, 64, 0), hipsys.ErrorInvalidValue, "past the pinned allocation")
	assert.ErrorIs(t, p.MemcpyDtoHAsync(0x1000, a, 4, 0), hipsys.ErrorInvalidValue, "not pinned memory")
	require.NoError(t, p.HostFree(h))
	assert.ErrorIs(t, p.HostFree(h), hipsys.ErrorInvalidValue, "freed twice")
	assert.ErrorIs(t, p.MemcpyHtoD(0, []byte{1}), hipsys.ErrorInvalidValue)
	c := hipsys.Copy2D{Dst: uintptr(a), DstPitch: 16, Src: uintptr(a), SrcPitch: 16, Width: 32, Height: 1, Kind: hipsys.MemcpyDeviceToDevice}
	assert.ErrorIs(t, p.Memcpy2D(c), hipsys.ErrorInvalidPitchValue)
	c.Width, c.Kind = 8, 9
	assert.ErrorIs(t, p.Memcpy2D(c), hipsys.ErrorInvalidMemcpyDirection)
}

// Each device's primary context is made current on whatever OS thread a call lands on:
// many goroutines, each locked to a fresh thread, allocate and copy without SetDevice.
func TestContextOnEveryThread(t *testing.T) {
	p := device(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			runtime.LockOSThread() // not unlocked: the thread exits with the goroutine
			d, err := p.GetDevice()
			if err != nil || d != 0 {
				errs <- fmt.Errorf("GetDevice = %d, %v", d, err)
				return
			}
			ptr, err := p.Malloc(4)
			if err != nil {
				errs <- err
				return
			}
			defer p.Free(ptr)
			in := []byte{byte(i), 1, 2, 3}
			out := make([]byte, 4)
			if err := p.MemcpyHtoD(ptr, in); err != nil {
				errs <- err
			} else if err := p.MemcpyDtoH(out, ptr); err != nil {
				errs <- err
			} else if !bytes.Equal(in, out) {
				errs <- fmt.Errorf("read %v, wrote %v", out, in)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	require.NoError(t, p.SetDevice(0))
}
