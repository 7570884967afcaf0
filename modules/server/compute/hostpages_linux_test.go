package compute

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// hugeAdvised reports whether the mapping holding addr is advised MADV_HUGEPAGE (its
// VmFlags in /proc/self/smaps carry "hg").
func hugeAdvised(t *testing.T, addr uintptr) bool {
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(strings.Fields(line)[0], ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				in = uint64(addr) >= a && uint64(addr) < b
				continue
			}
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Contains(line+" ", " hg ")
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no mapping holds %#x", addr)
	return false
}

// resident is how many bytes of b's pages are resident (mincore).
func resident(t *testing.T, b []byte) int {
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	_, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	require.Zero(t, e)
	n := 0
	for _, v := range vec {
		if v&1 != 0 {
			n += page
		}
	}
	return min(n, len(b))
}

// freshMapping is n bytes just mapped, huge-page aligned, never touched.
func freshMapping(t *testing.T, n, huge uintptr) []byte {
	m, err := syscall.Mmap(-1, 0, int(n+huge), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(m) })
	base := uintptr(unsafe.Pointer(&m[0]))
	skip := (base+huge-1)&^(huge-1) - base
	return m[skip : skip+n]
}

// A destination's huge-page blocks that no page of is resident are advised; a block
// in use is not, nor is a destination in use, and no byte changes.
func TestAdviseFreshAdvisesOnlyUntouchedBlocks(t *testing.T) {
	a := hugeAdvice()
	if a.huge == 0 {
		t.Skip("the kernel gives transparent huge pages without advice, or none (/sys/kernel/mm/transparent_hugepage/enabled is not madvise): adviseFresh does nothing here")
	}
	const blocks = 16
	dst := freshMapping(t, blocks*a.huge, a.huge)
	block := func(i int) uintptr { return uintptr(unsafe.Pointer(&dst[uintptr(i)*a.huge])) }
	// One byte in block 3 makes it resident.
	dst[3*a.huge+5] = 7
	adviseFresh(dst)
	// The advised blocks are faulted in already; checked before anything reads dst,
	// which would map the zero page.
	require.Equal(t, int(len(dst))-int(a.huge)+int(a.page), resident(t, dst), "every page of the fresh blocks is resident, block 3 (in use) as it was")
	for i := range blocks {
		require.Equal(t, i != 3, hugeAdvised(t, block(i)), "block %d", i)
	}
	require.Equal(t, byte(7), dst[3*a.huge+5])
	require.Equal(t, 1, bytes.Count(dst, []byte{7}))
	require.Equal(t, len(dst)-1, bytes.Count(dst, []byte{0}), "every byte still zero but the one written")

	// A destination in use throughout is left as it is.
	used := freshMapping(t, 8*a.huge, a.huge)
	for i := range used {
		used[i] = byte(i)
	}
	adviseFresh(used)
	for i := range 8 {
		require.False(t, hugeAdvised(t, uintptr(unsafe.Pointer(&used[uintptr(i)*a.huge]))), "block %d of a destination in use", i)
	}
	for i := range used {
		if used[i] != byte(i) {
			t.Fatalf("byte %d changed", i)
		}
	}

	// Below adviseMin nothing is checked or advised.
	small := freshMapping(t, adviseMin-a.page, a.huge)
	adviseFresh(small)
	require.False(t, hugeAdvised(t, uintptr(unsafe.Pointer(&small[0]))))
}
