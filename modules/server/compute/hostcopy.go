package compute

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The host side of a staged copy (between a pinned chunk and the caller's pageable
// memory) is a plain memcpy, and one core copies less than a PCIe 5 link moves
// (docs/benchmarks.md, "One core's memcpy"), so one goroutine would be the pipeline's
// bottleneck. Large copies are split
// over the host's cores, in parts of at least copyPart bytes.
const (
	// copyPart is the smallest part a goroutine copies: below it, starting the
	// goroutine costs more than it saves, and Go's memmove turns to non-temporal stores
	// (what a copy that leaves the cache wants) only from 1 MiB on.
	copyPart = 1 << 20
	// maxCopiers caps the goroutines of one copy: past 16 cores a host's memcpy gains
	// little (memory bandwidth is the limit), and the rest of the process keeps cores.
	maxCopiers = 16
	// teamMin is the smallest transfer that gets a copyTeam for its whole length: a
	// smaller one has few chunks to spread the team's start over, and copies with
	// copyParallel.
	teamMin = 32 << 20
	// teamSpin is how long a team's idle helper keeps polling before it parks. The gap
	// between two chunks' host copies is the device's copy of a chunk at worst (16 MiB
	// at 50 GB/s: 335 µs), so a helper spinning this long takes the next chunk's part
	// at once, instead of waiting for the Go scheduler to wake a parked thread for it,
	// which it does one thread after another, for every chunk.
	teamSpin = 500 * time.Microsecond
)

// copiers is how many goroutines one copy may use: the Go runtime's processors
// (GOMAXPROCS, the cores this process may run on), capped.
func copiers() int { return min(runtime.GOMAXPROCS(0), maxCopiers) }

// split is how copyParallel and copyTeam cut a copy of n bytes for up to workers
// goroutines: the number of parts and their length (a multiple of 64 bytes: where the
// destination starts on a cache line, as large allocations do, no line is written by
// two goroutines).
func split(n, workers int) (parts, step int) {
	parts = min(workers, n/copyPart)
	if parts <= 1 {
		return 1, n
	}
	step = ((n+parts-1)/parts + 63) &^ 63
	return (n + step - 1) / step, step
}

// copyParallel is copy(dst, src) spread over the host's cores for large copies: the
// calling goroutine copies the first part and a goroutine each of the others.
func copyParallel(dst, src []byte) {
	n := min(len(dst), len(src))
	parts, step := split(n, copiers())
	if parts <= 1 {
		copy(dst, src)
		return
	}
	var wg sync.WaitGroup
	for lo := step; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	copy(dst[:step], src[:step])
	wg.Wait()
}

// copyTeam is copyParallel for the chunks of one large transfer: helper goroutines that
// live as long as the transfer and poll for the next chunk's parts between chunks
// (teamSpin), so that every chunk's copy starts on all its cores at once. A fresh
// goroutine per part starts on an idle core only after the scheduler has woken a thread
// for it, one after another, which costs a large part of a chunk's copy. One goroutine
// uses a team at a time; nil is a valid team that copies with copyParallel.
type copyTeam struct {
	workers int
	parts   chan teamPart
	pending atomic.Int64 // parts of the current copy not yet copied
	done    sync.WaitGroup
}

type teamPart struct{ dst, src []byte }

// newCopyTeam is a team for a transfer of total bytes through chunks of chunk bytes,
// or nil where one would not pay: a small transfer, a chunk too small to split, or one
// core. Close it when the transfer is over.
func newCopyTeam(total, chunk uint64) *copyTeam {
	// No more goroutines than a chunk has parts: a helper that never gets one would
	// spin for the whole transfer, taking a core (or its sibling thread) from the rest.
	workers := int(min(uint64(copiers()), chunk/copyPart))
	if total < teamMin || workers < 2 {
		return nil
	}
	t := &copyTeam{workers: workers, parts: make(chan teamPart, workers)}
	for range workers - 1 {
		t.done.Go(t.help)
	}
	return t
}

// help copies parts until the team closes, polling for them while they came recently.
func (t *copyTeam) help() {
	last := time.Now()
	for spins := 0; ; spins++ {
		select {
		case p, ok := <-t.parts:
			if !ok {
				return
			}
			t.run(p)
			last, spins = time.Now(), 0
			continue
		default:
		}
		// Checking the clock every few polls keeps the poll cheap.
		if spins%64 == 63 && time.Since(last) > teamSpin {
			p, ok := <-t.parts
			if !ok {
				return
			}
			t.run(p)
			last, spins = time.Now(), 0
			continue
		}
		// Gives the core to any other runnable goroutine (a stream's worker on the cpu
		// platform, the caller's own work) or thread before polling again.
		yield()
	}
}

func (t *copyTeam) run(p teamPart) {
	copy(p.dst, p.src)
	t.pending.Add(-1)
}

// copy is copy(dst, src) over the team: the caller copies the first part, then any
// part no helper has taken yet, then waits for the parts the helpers hold (a part's
// copy at most, so it polls).
func (t *copyTeam) copy(dst, src []byte) {
	if t == nil {
		copyParallel(dst, src)
		return
	}
	n := min(len(dst), len(src))
	parts, step := split(n, t.workers)
	if parts <= 1 {
		copy(dst, src)
		return
	}
	t.pending.Store(int64(parts - 1))
	for lo := step; lo < n; lo += step {
		hi := min(lo+step, n)
		// Never blocks: the channel holds workers parts, and the last copy's parts are
		// all taken (pending reached zero) before this one queues its own.
		t.parts <- teamPart{dst: dst[lo:hi], src: src[lo:hi]}
	}
	copy(dst[:step], src[:step])
	for t.steal() {
	}
	for t.pending.Load() != 0 {
		yield()
	}
}

// steal copies a part no helper has taken yet, if there is one.
func (t *copyTeam) steal() bool {
	select {
	case p := <-t.parts:
		t.run(p)
		return true
	default:
		return false
	}
}

// close ends the helpers and waits for them to return; every copy has finished.
func (t *copyTeam) close() {
	if t == nil {
		return
	}
	close(t.parts)
	t.done.Wait()
}
