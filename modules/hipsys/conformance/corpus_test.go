package conformance_test

import (
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/conformance"
	hipcpu "github.com/cubehip/cubehip/modules/hipsys/cpu"
)

// captureStdout runs fn with file descriptor 1 (where device printf output goes, from the
// cpu device's kernels and from the GPU drivers alike) redirected to a pipe, and returns
// what was written there.
func captureStdout(t *testing.T) func(func()) string {
	return func(fn func()) string {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		saved, err := syscall.Dup(1)
		require.NoError(t, err)
		require.NoError(t, syscall.Dup3(int(w.Fd()), 1, 0))
		done := make(chan string)
		go func() {
			b, _ := io.ReadAll(r)
			done <- string(b)
		}()
		fn()
		os.Stdout.Sync()
		require.NoError(t, syscall.Dup3(saved, 1, 0))
		syscall.Close(saved)
		w.Close()
		return <-done
	}
}

func TestCorpusCPU(t *testing.T) { conformance.RunCorpus(t, cpu(t), captureStdout(t)) }

func TestCorpusNvidia(t *testing.T) {
	conformance.RunCorpus(t, gpu(t, "nvidia"), captureStdout(t))
}

func TestCorpusAMD(t *testing.T) { conformance.RunCorpus(t, gpu(t, "amd"), captureStdout(t)) }

// TestCorpusCPUChecked runs the corpus, real kernels others wrote, on the cpu device under
// every check: correct code must run clean (no report, the same answers).
func TestCorpusCPUChecked(t *testing.T) {
	if testing.Short() {
		t.Skip("every corpus kernel compiled checked: minutes on a small machine")
	}
	// Every check at once (each access a call), and memcheck with initcheck (the inline
	// shadow).
	for _, checks := range []hipsys.Checks{hipsys.CheckMemory | hipsys.CheckInit | hipsys.CheckSync | hipsys.CheckRace, hipsys.CheckMemory | hipsys.CheckInit} {
		t.Run(checks.String(), func(t *testing.T) {
			t.Setenv("CUBEHIP_CHECK", checks.String())
			p, err := hipcpu.Open() // a platform of its own, which reads the variable when it opens
			require.NoError(t, err)
			conformance.RunCorpus(t, p, captureStdout(t))
		})
	}
}
