package memory_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/cubehip/cubehip/modules/memory"
)

func TestImport(t *testing.T) {
	m, st := newManager(t)
	before := m.Usage()
	h, err := m.Import(0x10000, 4096, "owner")
	require.NoError(t, err)
	assert.Equal(t, 1, m.Imports())
	assert.Equal(t, before, m.Usage(), "imported memory is not the pools'")
	assert.Zero(t, st.Live(), "the storage is never asked")

	res, err := m.HandleResource(h)
	require.NoError(t, err)
	assert.Equal(t, uintptr(0x10000), res.Addr())
	assert.Equal(t, uint64(4096), res.Size)

	// A view trims like any other handle's.
	b, err := h.Binding()
	require.NoError(t, err)
	v, err := b.Clone()
	require.NoError(t, err)
	require.NoError(t, v.Narrow(256, 1024))
	res, err = m.Resource(v)
	require.NoError(t, err)
	assert.Equal(t, uintptr(0x10000+256), res.Addr())
	assert.Equal(t, uint64(4096-256-1024), res.Size)

	// Reserving never lands on imported memory.
	r := reserve(t, m, 4096)
	rr, err := m.HandleResource(r)
	require.NoError(t, err)
	assert.NotEqual(t, uintptr(0x10000), rr.Addr())
	require.NoError(t, r.Release())

	// Referenced: nothing to reclaim, whichever reference is left.
	require.NoError(t, h.Release())
	assert.Empty(t, m.ReclaimImports(nil))
	require.NoError(t, b.Release())
	assert.Empty(t, m.ReclaimImports(nil))
	require.NoError(t, v.Release())
	assert.Equal(t, []any{"owner"}, m.ReclaimImports(nil))
	assert.Empty(t, m.ReclaimImports(nil), "an owner comes back once")
	assert.Equal(t, 0, m.Imports())
	_, err = m.Resource(v)
	assert.ErrorIs(t, err, memory.ErrNotFound)

	// The slot is refilled by the next import.
	h2, err := m.Import(0x20000, 16, 2)
	require.NoError(t, err)
	res, err = m.HandleResource(h2)
	require.NoError(t, err)
	assert.Equal(t, uintptr(0x20000), res.Addr())
	assert.Equal(t, []any{2}, m.DropImports(nil), "drop takes referenced imports too")
	_, err = m.HandleResource(h2)
	assert.ErrorIs(t, err, memory.ErrNotFound)
	require.NoError(t, h2.Release(), "the user's reference is still given back once")
	assert.Equal(t, 0, m.Imports())
}

func TestImportRefusals(t *testing.T) {
	m, _ := newManager(t)
	for _, c := range []struct {
		base uintptr
		size uint64
	}{{0, 8}, {0x1000, 0}, {^uintptr(0) - 3, 16}} {
		_, err := m.Import(c.base, c.size, nil)
		assert.ErrorIs(t, err, memory.ErrInvalidImport)
	}
	assert.Equal(t, 0, m.Imports())
}

// TestReclaimImportsRandomSequences drives imports, clones, bindings and releases (some
// from other goroutines) in random order and checks every ReclaimImports against what a
// scan of the imports would find: exactly the imports nothing but the pool refers to
// any more, each once. The call looks only at the allocations whose last release hinted
// at them; a missed hint would keep another library's memory, a wrong one give it back
// while still in use.
func TestReclaimImportsRandomSequences(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m, _ := newManager(t)
		type ref struct {
			owner int
			h     *memory.Handle
			b     *memory.Binding
		}
		var refs []ref
		users := map[int]int{} // owner -> user references held
		reclaimed := map[int]bool{}
		next := 0
		release := func(r ref) {
			if r.h != nil {
				require.NoError(rt, r.h.Release())
			} else {
				require.NoError(rt, r.b.Release())
			}
		}
		for range rapid.IntRange(1, 120).Draw(rt, "steps") {
			switch op := rapid.IntRange(0, 5).Draw(rt, "op"); {
			case op == 0 || len(refs) == 0:
				next++
				h, err := m.Import(uintptr(next)<<16, 4096, next)
				require.NoError(rt, err)
				refs = append(refs, ref{owner: next, h: &h})
				users[next]++
			case op == 1:
				r := refs[rapid.IntRange(0, len(refs)-1).Draw(rt, "which")]
				if r.h != nil {
					c, err := r.h.Clone()
					require.NoError(rt, err)
					refs = append(refs, ref{owner: r.owner, h: &c})
				} else {
					c, err := r.b.Clone()
					require.NoError(rt, err)
					refs = append(refs, ref{owner: r.owner, b: &c})
				}
				users[r.owner]++
			case op == 2:
				r := refs[rapid.IntRange(0, len(refs)-1).Draw(rt, "which")]
				if r.h == nil {
					continue
				}
				b, err := r.h.Binding()
				require.NoError(rt, err)
				refs = append(refs, ref{owner: r.owner, b: &b})
				users[r.owner]++
			case op == 3 || op == 4:
				// Release one, on this goroutine or another (a stream's release worker).
				i := rapid.IntRange(0, len(refs)-1).Draw(rt, "which")
				r := refs[i]
				refs = append(refs[:i], refs[i+1:]...)
				users[r.owner]--
				if op == 4 {
					var wg sync.WaitGroup
					wg.Go(func() { release(r) })
					wg.Wait()
				} else {
					release(r)
				}
			case op == 5:
				got := m.ReclaimImports(nil)
				seen := map[int]bool{}
				for _, o := range got {
					owner := o.(int)
					require.False(rt, seen[owner], "owner %d given back twice in one call", owner)
					require.False(rt, reclaimed[owner], "owner %d given back again", owner)
					require.Zero(rt, users[owner], "owner %d given back while referenced", owner)
					seen[owner], reclaimed[owner] = true, true
				}
				for owner, n := range users {
					if n == 0 && !reclaimed[owner] {
						rt.Fatalf("owner %d: nothing refers to it, and ReclaimImports left it", owner)
					}
				}
				live := 0
				for owner := range users {
					if !reclaimed[owner] {
						live++
					}
				}
				require.Equal(rt, live, m.Imports())
			}
		}
		for _, r := range refs {
			release(r)
		}
		m.ReclaimImports(nil)
		require.Zero(rt, m.Imports(), "every import given back once nothing refers to it")
	})
}
