package memory

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSlicedCapBelowPageShrinksPage(t *testing.T) {
	tests := []struct {
		spec             SlicedSpec
		align            uint64
		wantPage         uint64
		wantPages        int
		wantMaxAllocSize uint64
	}{
		{SlicedSpec{PageSize: 8192, MaxPoolSize: 3000}, 256, 2816, 1, 2816},
		{SlicedSpec{PageSize: 8192, MaxPoolSize: 100}, 256, 256, 0, 256},
		{SlicedSpec{PageSize: 8192, MaxPoolSize: 3 * 8192, MaxSliceSize: 1024}, 256, 8192, 3, 1024},
		{SlicedSpec{PageSize: 8192}, 256, 8192, maxSlicedPages, 8192},
	}
	for _, tt := range tests {
		p := newSlicedPool(tt.spec, pages{align: tt.align})
		assert.Equal(t, tt.wantPage, p.pageSize, "%+v", tt.spec)
		assert.Equal(t, tt.wantPages, p.maxPages, "%+v", tt.spec)
		assert.Equal(t, tt.wantMaxAllocSize, p.maxAlloc, "%+v", tt.spec)
	}
}
