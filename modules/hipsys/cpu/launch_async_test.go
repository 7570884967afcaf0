package cpu

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

var one = hipsys.Dim3{X: 1, Y: 1, Z: 1}

// slowWrite loads the slow_write kernel (a spin, then out[0] = v).
func slowWrite(t testing.TB, p *Platform) hipsys.Function {
	t.Helper()
	loadKernels(t, p)
	for _, m := range p.modules.all() {
		if h, err := p.ModuleGetFunction(p.moduleHandle(m), "slow_write"); err == nil {
			return h
		}
	}
	t.Fatal("slow_write not found")
	return 0
}

// moduleHandle finds m's handle (tests only).
func (p *Platform) moduleHandle(m *module) hipsys.Module {
	p.modules.mu.RLock()
	defer p.modules.mu.RUnlock()
	for h, v := range p.modules.m {
		if v == m {
			return hipsys.Module(h)
		}
	}
	return 0
}

// TestCrossStreamWaitOnKernel: B waits on an event recorded on A after a slow kernel;
// B's copy of the kernel's output must see what the kernel wrote.
func TestCrossStreamWaitOnKernel(t *testing.T) {
	p := newTest(t)
	slow := slowWrite(t, p)
	a, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	b, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	ev, err := p.EventCreateWithFlags(0)
	require.NoError(t, err)
	d, err := p.Malloc(4)
	require.NoError(t, err)
	pin, err := p.HostMalloc(4, 0)
	require.NoError(t, err)
	require.NoError(t, p.Memset(d, 0, 4))

	for round := uint32(1); round <= 3; round++ {
		args := new(hipsys.KernelArgs).Ptr(d).U64(20_000_000).U32(round)
		require.NoError(t, p.ModuleLaunchKernel(slow, one, one, 0, a, args))
		require.NoError(t, p.EventRecord(ev, a))
		require.NoError(t, p.StreamWaitEvent(b, ev, 0))
		require.NoError(t, p.MemcpyDtoHAsync(pin, d, 4, b))
		require.NoError(t, p.StreamSynchronize(b))
		assert.Equal(t, round, binary.LittleEndian.Uint32(pin.Bytes(4)), "round %d", round)
	}

	require.NoError(t, p.EventDestroy(ev))
	require.NoError(t, p.StreamDestroy(a))
	require.NoError(t, p.StreamDestroy(b))
	require.NoError(t, p.Free(d))
	require.NoError(t, p.HostFree(pin))
}

// TestLaunchArgumentsCheckedAtOnce: a launch whose arguments do not match the kernel's
// parameters in number or size is refused by ModuleLaunchKernel itself, queues nothing,
// and leaves no failure for a later synchronization to find.
func TestLaunchArgumentsCheckedAtOnce(t *testing.T) {
	p := newTest(t)
	fill, empty := loadKernels(t, p)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	d, err := p.Malloc(64)
	require.NoError(t, err)
	require.NoError(t, p.Memset(d, 0, 64))

	cases := []struct {
		name   string
		fn     hipsys.Function
		args   *hipsys.KernelArgs
		detail string
	}{
		{"one too many", empty, new(hipsys.KernelArgs).U32(1), "kernel empty takes 0 arguments, got 1"},
		{"one too few", fill, new(hipsys.KernelArgs).Ptr(d).F32(1), "kernel fill takes 3 arguments, got 2"},
		{"one pointer where three are due", fill, new(hipsys.KernelArgs).Ptr(d), "kernel fill takes 3 arguments, got 1"},
		{"none where three are due", fill, nil, "kernel fill takes 3 arguments, got 0"},
		{"an I64 where the kernel takes unsigned", fill, new(hipsys.KernelArgs).Ptr(d).F32(1).U64(4), "argument 2 of kernel fill is 8 bytes; the parameter takes 4"},
		{"a 4-byte pointer", fill, new(hipsys.KernelArgs).U32(1).F32(1).U32(4), "argument 0 of kernel fill is 4 bytes; the parameter takes 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := p.ModuleLaunchKernel(c.fn, one, one, 0, h, c.args)
			requireStatus(t, err, "hipModuleLaunchKernel", hipsys.ErrorInvalidValue)
			assert.Contains(t, err.Error(), c.detail)
		})
	}
	require.NoError(t, p.StreamSynchronize(h), "nothing was queued, so nothing fails later")
	got := make([]byte, 64)
	require.NoError(t, p.MemcpyDtoH(got, d))
	assert.Equal(t, make([]byte, 64), got, "no refused launch ran")

	require.NoError(t, p.ModuleLaunchKernel(fill, one, hipsys.Dim3{X: 16, Y: 1, Z: 1}, 0, h, new(hipsys.KernelArgs).Ptr(d).F32(1).U32(16)))
	require.NoError(t, p.StreamSynchronize(h))
	assert.Equal(t, float32(16), readFloats(t, p, d, 16)[15])

	// A capture refuses the launch the same way, and records nothing for it.
	require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeRelaxed))
	requireStatus(t, p.ModuleLaunchKernel(empty, one, one, 0, h, new(hipsys.KernelArgs).U32(1)), "hipModuleLaunchKernel", hipsys.ErrorInvalidValue)
	g, err := p.StreamEndCapture(h)
	require.NoError(t, err)
	nodes, err := p.GraphGetNodes(g)
	require.NoError(t, err)
	assert.Empty(t, nodes)
	require.NoError(t, p.GraphDestroy(g))

	require.NoError(t, p.Free(d))
	require.NoError(t, p.StreamDestroy(h))
}

// TestGraphOutlivingItsModule: replaying a kernel node after its module was unloaded
// fails on the stream instead of running unmapped code.
func TestGraphOutlivingItsModule(t *testing.T) {
	p := newTest(t)
	_, empty := loadKernels(t, p)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeGlobal))
	require.NoError(t, p.ModuleLaunchKernel(empty, one, one, 0, h, nil))
	g, err := p.StreamEndCapture(h)
	require.NoError(t, err)
	x, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	require.NoError(t, p.GraphDestroy(g))
	for _, m := range p.modules.all() {
		require.NoError(t, p.ModuleUnload(p.moduleHandle(m)))
	}
	requireStatus(t, p.ModuleLaunchKernel(empty, one, one, 0, h, nil), "hipModuleLaunchKernel", hipsys.ErrorInvalidHandle)
	require.NoError(t, p.GraphLaunch(x, h))
	requireStatus(t, p.StreamSynchronize(h), "hipStreamSynchronize", hipsys.ErrorInvalidHandle)
	require.NoError(t, p.GraphExecDestroy(x))
	require.NoError(t, p.StreamDestroy(h))
}

// TestLaunchConcurrentSafe: launches from many goroutines onto shared and private
// streams, each checked.
func TestLaunchConcurrentSafe(t *testing.T) {
	p := newTest(t)
	fill, _ := loadKernels(t, p)
	const n = 256
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			h, err := p.StreamCreateWithFlags(hipsys.StreamFlags(g % 2))
			if !assert.NoError(t, err) {
				return
			}
			d, err := p.Malloc(4 * n)
			assert.NoError(t, err)
			var args hipsys.KernelArgs
			for i := 0; i < 30; i++ {
				target := h
				if i%3 == 0 {
					target = 0
				}
				args.Reset().Ptr(d).F32(float32(g*1000 + i)).U32(n)
				assert.NoError(t, p.ModuleLaunchKernel(fill, hipsys.Dim3{X: 2, Y: 1, Z: 1}, hipsys.Dim3{X: 128, Y: 1, Z: 1}, 0, target, &args))
				assert.NoError(t, p.StreamSynchronize(target))
				assert.Equal(t, float32(g*1000+i+n-1), readFloats(t, p, d, n)[n-1])
			}
			assert.NoError(t, p.Free(d))
			assert.NoError(t, p.StreamDestroy(h))
		}(g)
	}
	wg.Wait()
}
