package amd

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestCopiesRoundTripThroughTheLibrary(t *testing.T) {
	p := fakePlatform(t)
	d, err := p.Malloc(256)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Free(d)) }()
	src := make([]byte, 256)
	for i := range src {
		src[i] = byte(i)
	}
	require.NoError(t, p.MemcpyHtoD(d, src))
	require.NoError(t, p.Memset(d+16, 0xAB, 16))
	got := make([]byte, 64)
	require.NoError(t, p.MemcpyDtoH(got, d+8))
	assert.Equal(t, src[8:16], got[:8])
	assert.Equal(t, byte(0xAB), got[8])

	h, err := p.HostMalloc(64, hipsys.HostMallocDefault)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.HostFree(h)) }()
	require.NoError(t, p.MemcpyDtoHAsync(h, d, 64, hipsys.NullStream))
	assert.Equal(t, src[:16], h.Bytes(16))
}

func TestBadAddressesNeverReachHIP(t *testing.T) {
	p := fakePlatform(t)
	d, err := p.Malloc(256)
	require.NoError(t, err)
	defer p.Free(d)
	h, err := p.HostMalloc(64, hipsys.HostMallocDefault)
	require.NoError(t, err)
	defer p.HostFree(h)
	buf := make([]byte, 512)

	tests := []struct {
		name   string
		call   string
		status hipsys.Status
		detail string
		do     func() error
	}{
		{"copy past the end", "hipMemcpyHtoD", hipsys.ErrorInvalidValue, "run past the end", func() error { return p.MemcpyHtoD(d+200, buf[:100]) }},
		{"unknown device address", "hipMemcpyDtoH", hipsys.ErrorInvalidValue, "not in any live device allocation", func() error { return p.MemcpyDtoH(buf, 0x1000) }},
		{"memset past the end", "hipMemsetD8", hipsys.ErrorInvalidValue, "run past", func() error { return p.Memset(d, 0, 257) }},
		{"dtod source past the end", "hipMemcpyDtoD", hipsys.ErrorInvalidValue, "run past", func() error { return p.MemcpyDtoD(d, d+128, 200) }},
		{"async from unpinned host", "hipMemcpyHtoDAsync", hipsys.ErrorInvalidValue, "src: ", func() error { return p.MemcpyHtoDAsync(d, hipsys.HostPtr(d), 8, 0) }},
		{"async past pinned end", "hipMemcpyDtoHAsync", hipsys.ErrorInvalidValue, "pinned host", func() error { return p.MemcpyDtoHAsync(h, d, 65, 0) }},
		{"free interior", "hipFree", hipsys.ErrorInvalidValue, "not the start", func() error { return p.Free(d + 8) }},
		{"free unknown", "hipFree", hipsys.ErrorInvalidValue, "", func() error { return p.Free(0xdead000) }},
		{"host free unknown", "hipHostFree", hipsys.ErrorInvalidValue, "", func() error { return p.HostFree(h + 1) }},
		{"2D pitch below width", "hipMemcpy2D", hipsys.ErrorInvalidPitchValue, "", func() error {
			return p.Memcpy2D(hipsys.Copy2D{Dst: uintptr(d), DstPitch: 8, Src: uintptr(d), SrcPitch: 16, Width: 16, Height: 2, Kind: hipsys.MemcpyDeviceToDevice})
		}},
		{"2D last row past the end", "hipMemcpy2D", hipsys.ErrorInvalidValue, "Dst: ", func() error {
			return p.Memcpy2D(hipsys.Copy2D{Dst: uintptr(d), DstPitch: 64, Src: uintptr(h), SrcPitch: 16, Width: 16, Height: 4 + 1, Kind: hipsys.MemcpyHostToDevice})
		}},
		// Spans that wrap around 64 bits: unchecked, each would look like a copy of a
		// few bytes and then run through the fake library's memory (a crash here).
		{"2D pitch that wraps", "hipMemcpy2D", hipsys.ErrorInvalidValue, "DstPitch 18446744073709551552 bytes overflow", func() error {
			return p.Memcpy2D(hipsys.Copy2D{Dst: uintptr(d) + 64, DstPitch: 1<<64 - 64, Src: uintptr(d), SrcPitch: 64, Width: 64, Height: 2, Kind: hipsys.MemcpyDeviceToDevice})
		}},
		{"2D height 2^61+1 into 64 bytes", "hipMemcpy2DAsync", hipsys.ErrorInvalidValue, "Height 2305843009213693953 rows", func() error {
			return p.Memcpy2DAsync(hipsys.Copy2D{Dst: uintptr(h), DstPitch: 8, Src: uintptr(d), SrcPitch: 8, Width: 8, Height: 1<<61 + 1, Kind: hipsys.MemcpyDeviceToHost}, 0)
		}},
		{"2D oversized rows", "hipMemcpy2D", hipsys.ErrorInvalidValue, "overflow 64 bits", func() error {
			return p.Memcpy2D(hipsys.Copy2D{Dst: uintptr(d), DstPitch: 1 << 63, Src: uintptr(d), SrcPitch: 1 << 63, Width: 1 << 63, Height: 2, Kind: hipsys.MemcpyDeviceToDevice})
		}},
		{"2D bad kind", "hipMemcpy2DAsync", hipsys.ErrorInvalidMemcpyDirection, "", func() error {
			return p.Memcpy2DAsync(hipsys.Copy2D{Dst: uintptr(d), DstPitch: 16, Src: uintptr(d), SrcPitch: 16, Width: 16, Height: 1, Kind: 9}, 0)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			var he *hipsys.Error
			require.ErrorAs(t, err, &he)
			assert.Equal(t, tc.call, he.Call)
			assert.Equal(t, tc.status, he.Status)
			assert.Contains(t, he.Detail, tc.detail)
		})
	}
	// A 2D copy that fits works: 4 rows of 16 bytes, pitch 64, inside 256 bytes.
	assert.NoError(t, p.Memcpy2D(hipsys.Copy2D{Dst: uintptr(d), DstPitch: 64, Src: uintptr(h), SrcPitch: 16, Width: 16, Height: 4, Kind: hipsys.MemcpyDefault}))
}

func TestZeroSizesAreNoOps(t *testing.T) {
	p := fakePlatform(t)
	d, err := p.Malloc(0)
	require.NoError(t, err)
	assert.Zero(t, d)
	assert.NoError(t, p.Free(0))
	assert.NoError(t, p.HostFree(0))
	assert.NoError(t, p.MemcpyHtoD(0, nil))
	assert.NoError(t, p.Memset(0, 1, 0))
}

func TestAllocationsConcurrentSafe(t *testing.T) {
	p := fakePlatform(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := []byte{byte(g), 1, 2, 3}
			for range 200 {
				d, err := p.Malloc(4)
				if !assert.NoError(t, err) {
					return
				}
				assert.NoError(t, p.MemcpyHtoD(d, data))
				got := make([]byte, 4)
				assert.NoError(t, p.MemcpyDtoH(got, d))
				assert.Equal(t, data, got)
				assert.NoError(t, p.Free(d))
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, p.device.len())
}

func TestCopyChecksAllocateNothing(t *testing.T) {
	p := fakePlatform(t)
	d, err := p.Malloc(64)
	require.NoError(t, err)
	defer p.Free(d)
	buf := make([]byte, 64)
	allocs := testing.AllocsPerRun(100, func() {
		_ = p.MemcpyHtoD(d, buf)
		_ = p.MemcpyDtoH(buf, d)
	})
	assert.Zero(t, allocs)
}
