package stream_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// TestOrderRefusedWaitKeepsTheLastWriter: a write on B of a buffer last written on A
// whose cross-stream wait the driver refuses enqueues nothing, so it must not become
// the buffer's last write: B never waited for A's write, and the next command on B
// would skip that wait and race it (a successful rewrite there releases the failure,
// and a read returns the bytes from before A's write).
func TestOrderRefusedWaitKeepsTheLastWriter(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	const a, b stream.ID = 1, 2
	const n = 8 << 20 // large enough that an unordered copy would race A's
	x := newDeviceBuffer(t, m, a, n)
	first := pinned(t, p, bytes.Repeat([]byte{1}, n))
	second := pinned(t, p, bytes.Repeat([]byte{2}, 16))
	_, err := m.Stream(b)
	require.NoError(t, err)

	require.NoError(t, upload(m, a, x, first, n))
	require.True(t, p.FailNth(waitCall, 1, hipsys.ErrorInvalidValue))
	require.Error(t, upload(m, b, x, second, 16), "the refused wait fails the write")
	p.Reset()
	require.Error(t, m.EnsureWritten(x.b), "x carries the failure")

	waits := p.Calls(waitCall)
	require.NoError(t, upload(m, b, x, second, 16))
	assert.Equal(t, waits+1, p.Calls(waitCall), "B still waits for A's write")
	got, err := download(t, m, b, x, n)
	require.NoError(t, err)
	assert.Equal(t, append(bytes.Repeat([]byte{2}, 16), bytes.Repeat([]byte{1}, n-16)...), got)
}
