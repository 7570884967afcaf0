package compute_test

import (
	"bytes"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// bigTransfer is large enough for the host copies to take a team of goroutines and for
// a fresh destination to be advised huge pages: five chunks of transferChunk.
const bigTransfer = 40 << 20

// transferChunk is the staging chunk these tests count their copies in (the default is
// 16 MiB; the cpu device's pools here hold no buffer of five of those).
const transferChunk = 8 << 20

// newTransferEnv is newEnv with transferChunk staging chunks.
func newTransferEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, func(p hipsys.Platform) hipsys.Platform { return p }, compute.Config{StagingChunk: transferChunk})
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>20)
	}
	return b
}

// A large write and reads of it, into Go memory the read allocates and into memory
// just mapped from the OS (a fresh numpy array's), carry every byte.
func TestLargeCopiesCarryEveryByte(t *testing.T) {
	e := newTransferEnv(t)
	z := e.empty(1, bigTransfer/4)
	want := pattern(bigTransfer)
	require.NoError(t, e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(z, bigTransfer), Data: want}}, 1).Wait())

	got, err := e.srv.Read([]compute.CopyDescriptor{compute.Linear(z, bigTransfer)}, 1).Wait()
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got[0]), "read into a new slice")

	m, err := syscall.Mmap(-1, 0, bigTransfer, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(m)) }()
	require.NoError(t, e.srv.Read([]compute.CopyDescriptor{compute.Linear(z, bigTransfer)}, 1).WaitInto(m))
	require.True(t, bytes.Equal(want, m), "read into fresh memory")
}

// A large read whose wait for a chunk fails part way returns the failure, and the next
// read of the same buffer is whole.
func TestLargeReadFailingPartWayReturnsTheFailure(t *testing.T) {
	e := newTransferEnv(t)
	z := e.empty(1, bigTransfer/4)
	want := pattern(bigTransfer)
	require.NoError(t, e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(z, bigTransfer), Data: want}}, 1).Wait())
	require.NoError(t, e.srv.Sync(nil, 1).Wait())

	e.f.FailNth("hipEventSynchronize", 4, hipsys.ErrorLaunchFailure)
	dst := make([]byte, bigTransfer)
	err := e.srv.Read([]compute.CopyDescriptor{compute.Linear(z, bigTransfer)}, 1).WaitInto(dst)
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	e.f.Reset()

	require.NoError(t, e.srv.Read([]compute.CopyDescriptor{compute.Linear(z, bigTransfer)}, 1).WaitInto(dst))
	require.True(t, bytes.Equal(want, dst))
}

// A large write whose copy fails part way, in the chunks its Wait queues, returns the
// failure and leaves the destination carrying it: a read of it returns the failure,
// not half-written bytes. A whole write after it releases the failure.
func TestLargeWriteFailingPartWayLeavesTheDestinationFailed(t *testing.T) {
	e := newTransferEnv(t)
	z := e.empty(1, bigTransfer/4)
	want := pattern(bigTransfer)
	// The call queues the ring's three chunks; the fifth copy is its Wait's.
	e.f.FailNth("hipMemcpyHtoDAsync", 5, hipsys.ErrorLaunchFailure)
	err := e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(z, bigTransfer), Data: want}}, 1).Wait()
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	e.f.Reset()
	_, err = e.srv.Read([]compute.CopyDescriptor{compute.Linear(z, bigTransfer)}, 1).Wait()
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)

	require.NoError(t, e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(z, bigTransfer), Data: want}}, 1).Wait())
	got, err := e.srv.Read([]compute.CopyDescriptor{compute.Linear(z, bigTransfer)}, 1).Wait()
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got[0]))
}
