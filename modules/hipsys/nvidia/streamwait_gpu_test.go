package nvidia

import (
	"encoding/binary"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// busyKernel spins for about cycles of the multiprocessor's clock, then stores v: a wait
// that returned before the kernel finished reads the value before it.
const busyKernel = `#include <hip/hip_runtime.h>
extern "C" __global__ void busy(unsigned* x, unsigned v, long long cycles) {
	long long start = clock64();
	while (clock64() - start < cycles) {}
	if (threadIdx.x == 0 && blockIdx.x == 0) x[0] = v;
}
`

// On the GPU: a stream wait returns only once the stream's work is done, short or long,
// on streams made and destroyed one after another: the driver's wait, and the wait on a
// flagged launch's completion flag (which becomes the driver's for work that runs past
// its spin). A stream being captured gets no flag write, and its capture still replays.
func TestStreamWaitOnTheDevice(t *testing.T) {
	p := device(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(t, p.SetDevice(0))
	fn, err := p.ModuleGetFunction(compile(t, p, busyKernel), "busy")
	require.NoError(t, err)
	x, err := p.Malloc(4)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(x)) }()
	lq, err := p.OpenLaunchQueue(0)
	require.NoError(t, err)
	defer func() { require.NoError(t, lq.Close()) }()
	q := lq.(hipsys.FlaggingQueue)
	out := make([]byte, 4)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	var args hipsys.KernelArgs
	v := uint32(0)
	check := func(st hipsys.Stream, cycles int64) {
		t.Helper()
		v++
		seq, token, refused, err := q.LaunchFlagged(fn, one, one, 0, st, args.Reset().Ptr(x).U32(v).I64(cycles), nil)
		require.NoError(t, err)
		require.Empty(t, refused)
		require.Zero(t, seq, "a launch after a wait is issued directly")
		require.NotZero(t, token, "and flagged")
		if v%2 == 0 {
			require.NoError(t, p.StreamSynchronize(st))
		} else {
			require.NoError(t, p.StreamWaitFlag(st, token))
		}
		require.NoError(t, p.MemcpyDtoH(out, x))
		require.Equal(t, v, binary.LittleEndian.Uint32(out), "%d cycles", cycles)
		require.NoError(t, p.StreamWaitFlag(st, token), "a token already passed")
	}
	pinned, err := p.HostMalloc(4, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.HostFree(pinned)) }()
	// A small read's way: a plain launch, then a flagged copy into pinned memory and a
	// wait on the copy's flag.
	read := func(st hipsys.Stream, cycles int64) {
		t.Helper()
		v++
		require.NoError(t, p.ModuleLaunchKernel(fn, one, one, 0, st, args.Reset().Ptr(x).U32(v).I64(cycles)))
		token, err := p.MemcpyDtoHAsyncFlagged(pinned, x, 4, st)
		require.NoError(t, err)
		require.NotZero(t, token)
		require.NoError(t, p.StreamWaitFlag(st, token))
		require.Equal(t, v, binary.LittleEndian.Uint32(pinned.Bytes(4)), "%d cycles, read", cycles)
	}
	for range 3 {
		st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
		require.NoError(t, err)
		// 2^28 cycles: about 0.15 s at 1.98 GHz.
		for _, cycles := range []int64{0, 20_000, 0, 1 << 28, 0, 1 << 28, 20_000} {
			check(st, cycles)
			read(st, cycles)
		}
		require.NoError(t, p.StreamBeginCapture(st, hipsys.CaptureModeGlobal))
		seq, token, _, err := q.LaunchFlagged(fn, one, one, 0, st, args.Reset().Ptr(x).U32(1000).I64(0), nil)
		require.NoError(t, err)
		require.Zero(t, seq)
		require.Zero(t, token, "no flag write in a capture")
		g, err := p.StreamEndCapture(st)
		require.NoError(t, err)
		exec, err := p.GraphInstantiate(g)
		require.NoError(t, err)
		require.NoError(t, p.GraphDestroy(g))
		require.NoError(t, p.GraphLaunch(exec, st))
		require.NoError(t, p.StreamSynchronize(st))
		require.NoError(t, p.MemcpyDtoH(out, x))
		require.EqualValues(t, 1000, binary.LittleEndian.Uint32(out), "the captured launch replayed")
		require.NoError(t, p.GraphExecDestroy(exec))
		require.NoError(t, p.StreamDestroy(st))
	}
	_, token, _, err := q.LaunchFlagged(fn, one, one, 0, hipsys.Stream(0), args.Reset().Ptr(x).U32(7).I64(0), nil)
	require.NoError(t, err)
	require.Zero(t, token, "the null stream has no flag")
	require.NoError(t, p.StreamWaitFlag(hipsys.Stream(0), token), "a wait without a token is the driver's")
}

// trapKernel faults.
const trapKernel = `#include <hip/hip_runtime.h>
extern "C" __global__ void trap() { __trap(); }
`

// On the GPU, in a process of its own (a fault ends the context for the process): the
// wait for work that faulted reports the fault as a hipsys error, and the next wait
// reports it too.
func TestStreamWaitReportsAFault(t *testing.T) {
	if os.Getenv("CUBEHIP_TEST_TRAP") == "" {
		device(t) // skips without a GPU
		cmd := exec.Command(os.Args[0], "-test.run=^TestStreamWaitReportsAFault$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "CUBEHIP_TEST_TRAP=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestStreamWaitReportsAFault")
		return
	}
	p := device(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(t, p.SetDevice(0))
	// Compiled and loaded by hand: compile's cleanup unloads the module, which the dead
	// context refuses.
	prog, err := p.RTCCreateProgram(trapKernel, "trap.hip", nil)
	require.NoError(t, err)
	require.NoError(t, p.RTCCompileProgram(prog, nil))
	code, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	m, err := p.ModuleLoadData(code)
	require.NoError(t, err)
	fn, err := p.ModuleGetFunction(m, "trap")
	require.NoError(t, err)
	st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	lq, err := p.OpenLaunchQueue(0)
	require.NoError(t, err)
	_, token, _, err := lq.(hipsys.FlaggingQueue).LaunchFlagged(fn, one, one, 0, st, nil, nil)
	require.NoError(t, err)
	require.NotZero(t, token)
	start := time.Now()
	err = p.StreamWaitFlag(st, token) // the flag is never written: the driver's wait reports it
	require.Error(t, err)
	t.Logf("the fault, after %v: %v", time.Since(start), err)
	var he *hipsys.Error
	require.ErrorAs(t, err, &he)
	require.Error(t, p.StreamSynchronize(st), "a fault is sticky")
}
