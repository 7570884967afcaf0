package memory

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type nopStorage struct{ next StorageID }

func (s *nopStorage) Alloc(size uint64) (StorageHandle, error) {
	s.next++
	return StorageHandle{ID: s.next, Size: size}, nil
}
func (s *nopStorage) Dealloc(StorageID) {}
func (s *nopStorage) Flush()            {}
func (s *nopStorage) Resource(h StorageHandle) (Resource, error) {
	return Resource{Base: 1 << 20, Offset: h.Offset, Size: h.Size}, nil
}

// Lookups of locations no live reference can reach through the public API:
// they guard the manager against a corrupted or foreign descriptor.
func TestFindReasons(t *testing.T) {
	m, err := New(&nopStorage{}, DeviceProps{MemoryTotal: 1 << 30, Alignment: 256},
		WithLayout(Explicit(SlicedSpec{PageSize: 4096})))
	require.NoError(t, err)
	h, err := m.Reserve(1024)
	require.NoError(t, err)
	good := h.d.loc
	tests := []struct {
		loc  Location
		want NotFoundReason
	}{
		{Location{}, NeverBound},
		{Location{Pool: 7, Bound: true}, UnknownPool},
		{Location{Pool: 0, Page: 3, Bound: true}, UnknownPage},
		{Location{Pool: 0, Page: 0, Slice: 9, Bound: true}, UnknownSlice},
		{Location{Pool: 0, Page: 0, Slice: 1, Bound: true}, StaleLocation}, // the free remainder
		{Location{Pool: PersistentPool, Bound: true}, UnknownPage},
	}
	for _, tt := range tests {
		h.d.loc = tt.loc
		_, err := m.HandleResource(h)
		var nf *NotFoundError
		require.ErrorAs(t, err, &nf)
		assert.Equal(t, tt.want, nf.Reason, "%v", tt.loc)
		assert.Contains(t, err.Error(), tt.want.String())
	}
	h.d.loc = good
	_, err = m.HandleResource(h)
	assert.NoError(t, err)
	require.NoError(t, h.Release())
}
