package server_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// roundTrip writes data through the typed helpers, reads it back every way they offer
// and checks each against data.
func roundTrip[T server.Number](t *testing.T, d *server.Device, data []T) {
	t.Helper()
	b, err := server.UploadSlice(d.Stream, data)
	require.NoError(t, err)
	defer b.Release()
	var zero T
	assert.Equal(t, uint64(len(data))*uint64(sizeOfT(zero)), b.Size())
	got, err := server.ReadSlice[T](d.Stream, b)
	require.NoError(t, err)
	assert.Equal(t, data, got)

	into := make([]T, len(data))
	require.NoError(t, server.ReadSliceInto(d.Stream, into, b))
	assert.Equal(t, data, into)

	// At an element offset: write the tail over itself reversed, read the tail.
	tail := make([]T, len(data)-1)
	for i := range tail {
		tail[i] = data[len(data)-1-i]
	}
	require.NoError(t, server.WriteSliceAt(d.Stream, b, 1, tail))
	part := make([]T, len(tail))
	require.NoError(t, server.ReadSliceAt(d.Stream, part, b, 1))
	assert.Equal(t, tail, part)
	head := make([]T, 1)
	require.NoError(t, server.ReadSliceInto(d.Stream, head, b))
	assert.Equal(t, data[:1], head, "a write at an offset leaves the bytes before it")

	fresh, err := server.AllocSlice[T](d.Stream, 3)
	require.NoError(t, err)
	assert.Equal(t, 3*uint64(sizeOfT(zero)), fresh.Size())
	require.NoError(t, fresh.Release())
}

func sizeOfT[T server.Number](v T) int {
	switch any(v).(type) {
	case int8, uint8:
		return 1
	case int16, uint16:
		return 2
	case int32, uint32, float32:
		return 4
	}
	return 8
}

// Every numeric type makes the round trip bit for bit, extremes included.
func TestTypedRoundTrips(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	roundTrip(t, d, []int8{math.MinInt8, -1, 0, 1, math.MaxInt8})
	roundTrip(t, d, []uint8{0, 1, 128, math.MaxUint8})
	roundTrip(t, d, []int16{math.MinInt16, -1, 0, math.MaxInt16})
	roundTrip(t, d, []uint16{0, 1, math.MaxUint16})
	roundTrip(t, d, []int32{math.MinInt32, -1, 0, math.MaxInt32})
	roundTrip(t, d, []uint32{0, 1, math.MaxUint32})
	roundTrip(t, d, []int64{math.MinInt64, -1, 0, math.MaxInt64})
	roundTrip(t, d, []uint64{0, 1, math.MaxUint64})
	roundTrip(t, d, []float32{float32(math.Inf(-1)), -1.5, 0, math.SmallestNonzeroFloat32, math.MaxFloat32})
	roundTrip(t, d, []float64{math.Inf(1), -2.25, 0, math.SmallestNonzeroFloat64, math.MaxFloat64})
}

// A view passes a kernel a pointer into the middle of a buffer, and reads and writes
// at offsets touch only their range; a range past the end is refused and changes
// nothing.
func TestViewsAtOffsets(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	x, err := server.UploadSlice(d.Stream, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	require.NoError(t, err)
	y, err := server.UploadSlice(d.Stream, []float32{0, 0, 0, 0, 0, 0, 0, 0})
	require.NoError(t, err)
	// dev_scale(in, out, a, n) on in = x[2:6], out = y[4:8].
	require.NoError(t, d.Call(devScale, grid(4), x.View(8, 16).Arg(), y.View(16, 16).Arg(), server.F32(10), server.U32(4)))
	got, err := server.ReadSlice[float32](d.Stream, y)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0, 0, 0, 30, 40, 50, 60}, got)

	mid := make([]float32, 2)
	require.NoError(t, server.ReadSliceAt(d.Stream, mid, y, 5))
	assert.Equal(t, []float32{40, 50}, mid)

	assert.ErrorIs(t, d.Call(devScale, grid(4), x.View(20, 16).Arg(), y.Arg(), server.F32(1), server.U32(4)), server.ErrOutOfBounds)
	assert.ErrorIs(t, d.Call(devScale, grid(4), x.View(1<<63, 1<<63).Arg(), y.Arg(), server.F32(1), server.U32(4)), server.ErrOutOfBounds)
	assert.ErrorIs(t, d.ReadAt(make([]byte, 8), y, 28), server.ErrOutOfBounds)
	assert.ErrorIs(t, d.WriteAt(y, math.MaxUint64, []byte{1}), server.ErrOutOfBounds)
	got, err = server.ReadSlice[float32](d.Stream, y)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0, 0, 0, 30, 40, 50, 60}, got, "refused calls change nothing")
	require.NoError(t, d.Sync(x, y))

	assert.Equal(t, uint64(8), x.View(8, 16).Offset())
	assert.Equal(t, uint64(16), x.View(8, 16).Len())
	assert.Same(t, x, x.View(8, 16).Buffer())
}
