package nvidia

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// chainKernel makes each launch depend on the one before: a launch out of order, or one
// that read the buffer before the last had written it, gives another number.
const chainKernel = `#include <hip/hip_runtime.h>
extern "C" __global__ void chain(unsigned* x, unsigned v) {
	if (threadIdx.x == 0 && blockIdx.x == 0) x[0] = x[0] * 3u + v;
}
`

// On the GPU: launches through the device's queue run in order, a blocking copy after
// them (which settles the queue as every call does) sees all of them, and a launch the
// driver refuses comes back, numbered, from Settle.
func TestQueueOnTheDevice(t *testing.T) {
	p := device(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(t, p.SetDevice(0))
	fn, err := p.ModuleGetFunction(compile(t, p, chainKernel), "chain")
	require.NoError(t, err)
	st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.StreamDestroy(st)) }()
	x, err := p.Malloc(4)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(x)) }()
	require.NoError(t, p.Memset(x, 0, 4))

	q, err := p.OpenLaunchQueue(0)
	require.NoError(t, err)
	_, err = p.OpenLaunchQueue(0)
	require.Error(t, err, "one holder at a time")

	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	var want uint32
	var args hipsys.KernelArgs
	out := make([]byte, 4)
	for round := range 5 {
		for i := range 2000 {
			v := uint32(round*2000 + i)
			_, ref, err := q.Launch(fn, one, hipsys.Dim3{X: 32, Y: 1, Z: 1}, 0, st, args.Reset().Ptr(x).U32(v), nil)
			require.NoError(t, err)
			require.Empty(t, ref)
			want = want*3 + v
		}
		// A blocking copy on the null stream, which a non-blocking stream does not wait
		// for: the sync is what orders it, and the sync itself settles the queue first.
		require.NoError(t, p.StreamSynchronize(st))
		require.NoError(t, p.MemcpyDtoH(out, x))
		require.Equal(t, want, binary.LittleEndian.Uint32(out), "round %d", round)
	}

	// More threads per block than any NVIDIA GPU allows: the driver refuses it.
	for range 5 { // past handoffRun, so that it goes through the queue's thread
		_, _, err = q.Launch(fn, one, one, 0, st, args.Reset().Ptr(x).U32(1), nil)
		require.NoError(t, err)
	}
	seq, ref, err := q.Launch(fn, one, hipsys.Dim3{X: 4096, Y: 1, Z: 1}, 0, st, args.Reset().Ptr(x).U32(1), nil)
	if seq == 0 {
		require.Error(t, err, "issued directly: refused at once")
	} else {
		require.NoError(t, err)
		ref = q.Settle(ref)
		require.Len(t, ref, 1)
		require.Equal(t, seq, ref[0].Seq)
		var he *hipsys.Error
		require.ErrorAs(t, ref[0].Err, &he)
		require.Equal(t, hipsys.ErrorInvalidValue, he.Status)
	}
	require.NoError(t, q.Close())
	q2, err := p.OpenLaunchQueue(0)
	require.NoError(t, err, "Close gave it back")
	require.NoError(t, q2.Close())
}
