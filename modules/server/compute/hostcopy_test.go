package compute

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every split covers the copy exactly, in parts of whole cache lines, never more parts
// than workers, none below copyPart.
func TestSplitCoversTheCopy(t *testing.T) {
	for _, n := range []int{0, 1, copyPart - 1, copyPart, 2*copyPart - 1, 2 * copyPart, 8<<20 + 4097, 17 << 20} {
		for _, workers := range []int{1, 2, 3, 16} {
			parts, step := split(n, workers)
			require.LessOrEqual(t, parts, max(workers, 1), "n %d workers %d", n, workers)
			if parts == 1 {
				require.Equal(t, n, step)
				continue
			}
			require.Zero(t, step%64, "n %d workers %d: step %d", n, workers, step)
			require.GreaterOrEqual(t, step, copyPart, "n %d workers %d", n, workers)
			require.Equal(t, parts, (n+step-1)/step)
			require.Less(t, (parts-1)*step, n, "n %d workers %d: an empty last part", n, workers)
		}
	}
}

// withCopiers runs f with at least n Go processors, so that copies split however many
// cores the machine has.
func withCopiers(t *testing.T, n int) {
	if runtime.GOMAXPROCS(0) < n {
		old := runtime.GOMAXPROCS(n)
		t.Cleanup(func() { runtime.GOMAXPROCS(old) })
	}
}

// newCopyTeamClosed is newCopyTeam, closed when the test ends.
func newCopyTeamClosed(t *testing.T, total, chunk uint64) *copyTeam {
	team := newCopyTeam(total, chunk)
	t.Cleanup(team.close)
	return team
}

// A team copies every byte of each copy it is given, one after another, and nothing
// beyond; its helpers are gone once it is closed.
func TestCopyTeamCopiesExactly(t *testing.T) {
	withCopiers(t, 4)
	before := runtime.NumGoroutine()
	team := newCopyTeam(teamMin, 8<<20)
	require.NotNil(t, team)
	src := make([]byte, 17<<20)
	for i := range src {
		src[i] = byte(i*131 + i>>12)
	}
	for _, n := range []int{0, 1, copyPart - 1, 2*copyPart + 13, 8<<20 + 4097, 17 << 20} {
		for _, off := range []int{0, 1, 4093} {
			if off+n > len(src) {
				continue
			}
			dst := bytes.Repeat([]byte{0xAA}, n+2*4096)
			team.copy(dst[4096:4096+n], src[off:off+n])
			require.True(t, bytes.Equal(src[off:off+n], dst[4096:4096+n]), "n %d off %d", n, off)
			require.Equal(t, bytes.Repeat([]byte{0xAA}, 4096), dst[:4096], "n %d off %d: written before", n, off)
			require.Equal(t, bytes.Repeat([]byte{0xAA}, 4096), dst[4096+n:], "n %d off %d: written after", n, off)
		}
	}
	team.close()
	// close waited for the helpers to return; their goroutines end right after.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "the team's helpers outlive it")
}

// A transfer too small for a team, or a machine of one core, gets none, and the nil team
// copies as copyParallel does.
func TestCopyTeamOnlyForLargeTransfers(t *testing.T) {
	withCopiers(t, 2)
	require.Nil(t, newCopyTeam(teamMin-1, 8<<20))
	require.Nil(t, newCopyTeam(teamMin, copyPart))
	require.Nil(t, newCopyTeam(teamMin, 2*copyPart-1))
	// As many goroutines as a chunk has parts, the caller's included.
	require.Equal(t, 2, newCopyTeamClosed(t, teamMin, 2*copyPart).workers)
	old := runtime.GOMAXPROCS(1)
	require.Nil(t, newCopyTeam(1<<30, 8<<20))
	runtime.GOMAXPROCS(old)
	var team *copyTeam
	src := bytes.Repeat([]byte{1, 2, 3}, 3<<20)
	dst := make([]byte, len(src))
	team.copy(dst, src)
	require.Equal(t, src, dst)
	team.close()
}
