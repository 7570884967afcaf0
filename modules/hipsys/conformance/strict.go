package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// cpuStrict holds what the cpu platform promises beyond HIP: it knows every allocation,
// so a copy past an allocation's end, a freed pointer or an invented handle is
// hipErrorInvalidValue or hipErrorInvalidHandle rather than a crash. GPU drivers do not
// check these (a stray copy may fault the device or scribble memory), so the suite asks
// them of the cpu platform only.
func (s *suite) cpuStrict(t *testing.T) {
	p := s.p
	inval := hipsys.ErrorInvalidValue

	t.Run("launches are asynchronous", func(t *testing.T) {
		// The cpu platform's streams are workers, as a GPU's queues are (DESIGN, "The
		// CPU platform"): a launch returns before the kernel runs. The general stream
		// tests accept a ready stream right after a launch, so a platform that ran
		// work inline would pass them; here a spin of at least tens of milliseconds
		// on any host must still be pending when queried microseconds later.
		st := s.stream(t, hipsys.StreamNonBlocking)
		out := s.zeros(t, 8)
		ev := s.event(t, hipsys.EventDisableTiming)
		s.spin(t, st, out, spinIters, 3)
		require.NoError(t, p.EventRecord(ev, st))
		s.expect(t, p.StreamQuery(st), "hipStreamQuery", hipsys.ErrorNotReady)
		s.expect(t, p.EventQuery(ev), "hipEventQuery", hipsys.ErrorNotReady)
		s.sync(t, st)
	})

	t.Run("asynchronous failures reach every synchronization", s.asyncFailures)
	t.Run("launch arguments checked at the call", s.launchArguments)

	t.Run("copies past the end", func(t *testing.T) {
		ptr := s.malloc(t, 1024)
		other := s.malloc(t, 1024)
		buf := make([]byte, 1025)
		st := s.stream(t, hipsys.StreamNonBlocking)
		h := s.hostMalloc(t, 2048)
		s.expect(t, p.MemcpyHtoD(ptr, buf), "hipMemcpyHtoD", inval)
		s.expect(t, p.MemcpyHtoD(ptr+512, buf[:513]), "hipMemcpyHtoD", inval)
		require.NoError(t, p.MemcpyHtoD(ptr+512, buf[:512]), "exactly to the end is fine")
		s.expect(t, p.MemcpyDtoH(buf, ptr), "hipMemcpyDtoH", inval)
		s.expect(t, p.MemcpyDtoD(other, ptr, 1025), "hipMemcpyDtoD", inval)
		s.expect(t, p.MemcpyDtoD(other+1, ptr, 1024), "hipMemcpyDtoD", inval)
		s.expect(t, p.Memset(ptr, 0, 1025), "hipMemset", inval)
		s.expect(t, p.MemsetAsync(ptr+1000, 0, 25, st), "hipMemsetAsync", inval)
		s.expect(t, p.MemcpyHtoDAsync(ptr, h, 1025, st), "hipMemcpyHtoDAsync", inval)
		s.expect(t, p.MemcpyDtoHAsync(h, ptr, 1025, st), "hipMemcpyDtoHAsync", inval)
		s.expect(t, p.MemcpyDtoHAsync(h+2000, ptr, 100, st), "hipMemcpyDtoHAsync", inval)
		s.expect(t, p.MemcpyDtoDAsync(other, ptr+1, 1024, st), "hipMemcpyDtoDAsync", inval)
		c := hipsys.Copy2D{Dst: uintptr(other), DstPitch: 256, Src: uintptr(ptr), SrcPitch: 256, Width: 200, Height: 5, Kind: hipsys.MemcpyDeviceToDevice}
		s.expect(t, p.Memcpy2D(c), "hipMemcpy2D", inval)
		s.expect(t, p.Memcpy2DAsync(c, st), "hipMemcpy2DAsync", inval)
		c.Height = 4
		require.NoError(t, p.Memcpy2D(c), "4 rows of 256 fit in 1024 bytes")
		s.sync(t, st)
	})

	t.Run("freed and invented pointers", func(t *testing.T) {
		ptr, err := p.Malloc(256)
		require.NoError(t, err)
		require.NoError(t, p.Free(ptr))
		s.expect(t, p.Free(ptr), "hipFree", inval)
		s.expect(t, p.MemcpyHtoD(ptr, make([]byte, 16)), "hipMemcpyHtoD", inval)
		s.expect(t, p.Memset(ptr, 0, 16), "hipMemset", inval)
		s.expect(t, p.Free(0x1234_5678), "hipFree", inval)
		live := s.malloc(t, 256)
		s.expect(t, p.Free(live+16), "hipFree", inval)

		h, err := p.HostMalloc(256, hipsys.HostMallocDefault)
		require.NoError(t, err)
		require.NoError(t, p.HostFree(h))
		s.expect(t, p.HostFree(h), "hipHostFree", inval)
	})

	t.Run("invented handles", func(t *testing.T) {
		bad := hipsys.ErrorInvalidHandle
		s.expect(t, p.StreamQuery(0x1234), "hipStreamQuery", bad)
		s.expect(t, p.StreamDestroy(0x1234), "hipStreamDestroy", bad)
		s.expect(t, p.EventQuery(0x1234), "hipEventQuery", bad)
		s.expect(t, p.EventRecord(0x1234, hipsys.NullStream), "hipEventRecord", bad)
		s.expect(t, p.ModuleUnload(0x1234), "hipModuleUnload", bad)
		s.expect(t, p.GraphDestroy(0x1234), "hipGraphDestroy", bad)
		s.expect(t, p.GraphLaunch(0x1234, hipsys.NullStream), "hipGraphLaunch", bad)
		st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
		require.NoError(t, err)
		require.NoError(t, p.StreamDestroy(st))
		s.expect(t, p.StreamDestroy(st), "hipStreamDestroy", bad)
	})
}
