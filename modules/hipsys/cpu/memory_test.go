package cpu

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestMallocFree(t *testing.T) {
	p := newTest(t)
	for _, size := range []uint64{1, 255, 256, 4097, mmapThreshold - 1, mmapThreshold, 3 << 20} {
		ptr, err := p.Malloc(size)
		require.NoError(t, err, "size %d", size)
		assert.Zero(t, uint64(ptr)%alignment, "size %d not aligned", size)
		free, total, err := p.MemGetInfo()
		require.NoError(t, err)
		assert.Equal(t, total-reservedSize(size), free)
		// The whole block is usable.
		require.NoError(t, p.Memset(ptr, 0xAB, size))
		require.NoError(t, p.Free(ptr))
	}
	ptr, err := p.Malloc(0)
	require.NoError(t, err)
	assert.Zero(t, ptr)
	require.NoError(t, p.Free(0))
	require.NoError(t, p.HostFree(0))
}

func TestMallocErrors(t *testing.T) {
	p := newTest(t)
	_, err := p.Malloc(p.totalMem + 1)
	requireStatus(t, err, "hipMalloc", hipsys.ErrorOutOfMemory)

	ptr, err := p.Malloc(1024)
	require.NoError(t, err)
	host, err := p.HostMalloc(64, hipsys.HostMallocDefault)
	require.NoError(t, err)

	cases := []struct {
		name string
		free func() error
		call string
	}{
		{"interior device pointer", func() error { return p.Free(ptr + 8) }, "hipFree"},
		{"unknown device pointer", func() error { return p.Free(0xdead0000) }, "hipFree"},
		{"host pointer to hipFree", func() error { return p.Free(hipsys.DevicePtr(host)) }, "hipFree"},
		{"device pointer to hipHostFree", func() error { return p.HostFree(hipsys.HostPtr(ptr)) }, "hipHostFree"},
		{"unknown host pointer", func() error { return p.HostFree(0xbeef0000) }, "hipHostFree"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { requireStatus(t, c.free(), c.call, hipsys.ErrorInvalidValue) })
	}
	require.NoError(t, p.Free(ptr))
	requireStatus(t, p.Free(ptr), "hipFree", hipsys.ErrorInvalidValue) // double free
	require.NoError(t, p.HostFree(host))
	requireStatus(t, p.HostFree(host), "hipHostFree", hipsys.ErrorInvalidValue)
}

func TestCopies(t *testing.T) {
	p := newTest(t)
	const n = 4096
	a, err := p.Malloc(n)
	require.NoError(t, err)
	b, err := p.Malloc(n)
	require.NoError(t, err)
	h, err := p.HostMalloc(n, hipsys.HostMallocMapped)
	require.NoError(t, err)
	defer func() {
		require.NoError(t, p.Free(a))
		require.NoError(t, p.Free(b))
		require.NoError(t, p.HostFree(h))
	}()

	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i * 7)
	}
	require.NoError(t, p.MemcpyHtoD(a, src))
	require.NoError(t, p.MemcpyDtoD(b, a, n))
	got := make([]byte, n)
	require.NoError(t, p.MemcpyDtoH(got, b))
	assert.Equal(t, src, got)

	// Interior pointers are valid, and a range may end exactly at the block's end.
	require.NoError(t, p.Memset(a+n-16, 0x5A, 16))
	require.NoError(t, p.MemcpyDtoH(got[:16], a+n-16))
	assert.Equal(t, bytes.Repeat([]byte{0x5A}, 16), got[:16])

	// Async round trip through pinned memory on a stream.
	s, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.StreamDestroy(s)) }()
	copy(h.Bytes(n), src)
	require.NoError(t, p.MemsetAsync(b, 0, n, s))
	require.NoError(t, p.MemcpyHtoDAsync(b, h, n, s))
	require.NoError(t, p.MemsetAsync(a, 0, n, s))
	require.NoError(t, p.MemcpyDtoDAsync(a, b, n, s))
	// h may be touched again only once the queued upload has run.
	require.NoError(t, p.StreamSynchronize(s))
	clear(h.Bytes(n))
	require.NoError(t, p.MemcpyDtoHAsync(h, a, n, s))
	require.NoError(t, p.StreamSynchronize(s))
	assert.Equal(t, src, h.Bytes(n))
}

func TestCopyErrors(t *testing.T) {
	p := newTest(t)
	const n = 1024
	d, err := p.Malloc(n)
	require.NoError(t, err)
	h, err := p.HostMalloc(n, 0)
	require.NoError(t, err)
	freed, err := p.Malloc(n)
	require.NoError(t, err)
	require.NoError(t, p.Free(freed))
	defer func() {
		require.NoError(t, p.Free(d))
		require.NoError(t, p.HostFree(h))
	}()
	buf := make([]byte, n)
	notPinned := hipsys.HostPtr(0x7000_0000)

	cases := []struct {
		name string
		call string
		want hipsys.Status
		do   func() error
	}{
		{"memset past end", "hipMemset", hipsys.ErrorInvalidValue, func() error { return p.Memset(d+1, 0, n) }},
		{"memset freed", "hipMemset", hipsys.ErrorInvalidValue, func() error { return p.Memset(freed, 0, 1) }},
		{"memset host ptr", "hipMemset", hipsys.ErrorInvalidValue, func() error { return p.Memset(hipsys.DevicePtr(h), 0, 1) }},
		{"memset async past end", "hipMemsetAsync", hipsys.ErrorInvalidValue, func() error { return p.MemsetAsync(d, 0, n+1, 0) }},
		{"memset async bad stream", "hipMemsetAsync", hipsys.ErrorInvalidHandle, func() error { return p.MemsetAsync(d, 0, 1, 12345) }},
		{"htod past end", "hipMemcpyHtoD", hipsys.ErrorInvalidValue, func() error { return p.MemcpyHtoD(d+n/2, buf) }},
		{"htod unknown", "hipMemcpyHtoD", hipsys.ErrorInvalidValue, func() error { return p.MemcpyHtoD(0x1000, buf) }},
		{"dtoh past end", "hipMemcpyDtoH", hipsys.ErrorInvalidValue, func() error { return p.MemcpyDtoH(buf, d+1) }},
		{"dtoh freed", "hipMemcpyDtoH", hipsys.ErrorInvalidValue, func() error { return p.MemcpyDtoH(buf[:1], freed) }},
		{"dtod bad src", "hipMemcpyDtoD", hipsys.ErrorInvalidValue, func() error { return p.MemcpyDtoD(d, freed, 1) }},
		{"dtod bad dst", "hipMemcpyDtoD", hipsys.ErrorInvalidValue, func() error { return p.MemcpyDtoD(freed, d, 1) }},
		{"htod async unpinned src", "hipMemcpyHtoDAsync", hipsys.ErrorInvalidValue, func() error { return p.MemcpyHtoDAsync(d, notPinned, 8, 0) }},
		{"htod async past end", "hipMemcpyHtoDAsync", hipsys.ErrorInvalidValue, func() error { return p.MemcpyHtoDAsync(d, h+1, n, 0) }},
		{"dtoh async unpinned dst", "hipMemcpyDtoHAsync", hipsys.ErrorInvalidValue, func() error { return p.MemcpyDtoHAsync(notPinned, d, 8, 0) }},
		{"dtoh async device as host", "hipMemcpyDtoHAsync", hipsys.ErrorInvalidValue, func() error { return p.MemcpyDtoHAsync(hipsys.HostPtr(d), d, 8, 0) }},
		{"dtod async bad", "hipMemcpyDtoDAsync", hipsys.ErrorInvalidValue, func() error { return p.MemcpyDtoDAsync(d, freed, 8, 0) }},
		{"dtod async bad stream", "hipMemcpyDtoDAsync", hipsys.ErrorInvalidHandle, func() error { return p.MemcpyDtoDAsync(d, d, 8, 99) }},
		{"2d bad kind", "hipMemcpy2D", hipsys.ErrorInvalidMemcpyDirection, func() error {
			return p.Memcpy2D(hipsys.Copy2D{Dst: uintptr(d), Src: uintptr(d), DstPitch: 8, SrcPitch: 8, Width: 8, Height: 1, Kind: 9})
		}},
		{"2d pitch under width", "hipMemcpy2D", hipsys.ErrorInvalidPitchValue, func() error {
			return p.Memcpy2D(hipsys.Copy2D{Dst: uintptr(d), Src: uintptr(h), DstPitch: 4, SrcPitch: 8, Width: 8, Height: 1, Kind: hipsys.MemcpyHostToDevice})
		}},
		{"2d past end", "hipMemcpy2D", hipsys.ErrorInvalidValue, func() error {
			return p.Memcpy2D(hipsys.Copy2D{Dst: uintptr(d), Src: uintptr(h), DstPitch: 128, SrcPitch: 128, Width: 128, Height: 9, Kind: hipsys.MemcpyHostToDevice})
		}},
		{"2d unpinned host", "hipMemcpy2D", hipsys.ErrorInvalidValue, func() error {
			return p.Memcpy2D(hipsys.Copy2D{Dst: uintptr(d), Src: uintptr(notPinned), DstPitch: 8, SrcPitch: 8, Width: 8, Height: 1, Kind: hipsys.MemcpyHostToDevice})
		}},
		{"2d async device as host", "hipMemcpy2DAsync", hipsys.ErrorInvalidValue, func() error {
			return p.Memcpy2DAsync(hipsys.Copy2D{Dst: uintptr(d), Src: uintptr(d), DstPitch: 8, SrcPitch: 8, Width: 8, Height: 1, Kind: hipsys.MemcpyHostToDevice}, 0)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { requireStatus(t, c.do(), c.call, c.want) })
	}
	// Zero-length operations do nothing and succeed.
	require.NoError(t, p.Memset(d, 0, 0))
	require.NoError(t, p.MemcpyHtoD(d, nil))
	require.NoError(t, p.MemcpyDtoH(nil, d))
	require.NoError(t, p.MemcpyDtoD(d, d, 0))
	require.NoError(t, p.MemcpyHtoDAsync(d, h, 0, 0))
	require.NoError(t, p.Memcpy2D(hipsys.Copy2D{Kind: hipsys.MemcpyDeviceToDevice}))
}

func TestMemcpy2D(t *testing.T) {
	p := newTest(t)
	const w, hgt, spitch, dpitch = 5, 4, 8, 16
	h, err := p.HostMalloc(spitch*hgt, 0)
	require.NoError(t, err)
	d, err := p.Malloc(dpitch*(hgt-1) + w) // ends exactly at the last row's width
	require.NoError(t, err)
	back, err := p.HostMalloc(w*hgt, 0)
	require.NoError(t, err)
	defer func() {
		require.NoError(t, p.HostFree(h))
		require.NoError(t, p.HostFree(back))
		require.NoError(t, p.Free(d))
	}()
	src := h.Bytes(spitch * hgt)
	for i := range src {
		src[i] = byte(i)
	}
	kinds := []hipsys.MemcpyKind{hipsys.MemcpyHostToDevice, hipsys.MemcpyDefault}
	for _, kind := range kinds {
		require.NoError(t, p.Memset(d, 0, dpitch*(hgt-1)+w))
		require.NoError(t, p.Memcpy2D(hipsys.Copy2D{Dst: uintptr(d), DstPitch: dpitch, Src: uintptr(h), SrcPitch: spitch, Width: w, Height: hgt, Kind: kind}))
		// Back into a packed pinned buffer, asynchronously.
		require.NoError(t, p.Memcpy2DAsync(hipsys.Copy2D{Dst: uintptr(back), DstPitch: w, Src: uintptr(d), SrcPitch: dpitch, Width: w, Height: hgt, Kind: hipsys.MemcpyDeviceToHost}, 0))
		require.NoError(t, p.StreamSynchronize(0))
		for row := 0; row < hgt; row++ {
			assert.Equal(t, src[row*spitch:row*spitch+w], back.Bytes(w * hgt)[row*w:(row+1)*w], "row %d kind %d", row, kind)
		}
	}
}
