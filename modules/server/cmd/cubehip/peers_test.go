package main

import (
	"bytes"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/cpu"
	"github.com/cubehip/cubehip/modules/server"
)

func TestPeerMatrixOfSeveralCPUDevices(t *testing.T) {
	t.Setenv("CUBEHIP_CPU_DEVICES", "3")
	p, err := cpu.Open()
	require.NoError(t, err)
	m, err := peerMatrix(p, 3)
	require.NoError(t, err)
	assert.Equal(t, [][]bool{{false, true, true}, {true, false, true}, {true, true, false}}, m)
	assert.Equal(t, []int{0, 2}, peersOf(m, 1))

	var out bytes.Buffer
	printPeerMatrix(&out, "cpu", [][]bool{{false, true}, {false, false}})
	assert.Equal(t, "cpu peer access (row reaches column):\n"+
		"          0   1\n"+
		"      0   -   y\n"+
		"      1   .   -\n", out.String())

	_, err = peerMatrix(p, 4)
	assert.ErrorContains(t, err, "hipErrorInvalidDevice")
}

// With two cpu devices the peer copy is measured and judged against the host's memcpy;
// with one it is n/a, saying why.
func TestBenchPeerCopy(t *testing.T) {
	for _, tc := range []struct {
		devices string
		na      bool
	}{{"2", false}, {"1", true}} {
		t.Setenv("CUBEHIP_CPU_DEVICES", tc.devices)
		p, err := cpu.Open()
		require.NoError(t, err)
		d, err := server.OpenPlatform(p, server.Options{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		b := &bencher{d: d, p: p, scale: 0.25, out: io.Discard}
		f, err := b.peerCopy()
		require.NoError(t, err)
		require.NoError(t, d.Close())
		rows := judge([]figure{f}, true)
		if tc.na {
			assert.Equal(t, "n/a", rows[0].Verdict)
			assert.Equal(t, "needs 2 devices; cpu has 1", rows[0].Budget)
			continue
		}
		assert.Positive(t, f.device)
		assert.Positive(t, f.raw)
		assert.Equal(t, "memcpy", f.rawFrom)
		assert.Contains(t, rows[0].Budget, "at least 0.8× raw")
		assert.Contains(t, []string{"ok", "MISSED"}, rows[0].Verdict)
	}
}
