package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server"
)

// openCPUDevices opens every device of a fresh cpu platform of n devices, behind one
// fault injector, as n Devices. When the test ends they are closed and the platform
// must hold nothing: no stream, event or allocation any copy took is left behind.
func openCPUDevices(t *testing.T, n int) ([]*server.Device, *faults.Platform) {
	return openCPUDevicesB(t, n)
}

func openCPUDevicesB(t testing.TB, n int) ([]*server.Device, *faults.Platform) {
	t.Helper()
	t.Setenv("CUBEHIP_CPU_DEVICES", fmt.Sprint(n))
	p, err := cpu.Open()
	require.NoError(t, err)
	f := faults.Wrap(p)
	ds := make([]*server.Device, n)
	t.Cleanup(func() {
		f.Reset()
		for _, d := range ds {
			if d != nil {
				assert.NoError(t, d.Close())
			}
		}
		live := p.(hipsys.LiveCounter).Live()
		assert.True(t, live.IsZero(), "leaked after Close: %s", live)
	})
	for i := range ds {
		ds[i], err = server.OpenPlatform(f, server.Options{Index: i, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
	}
	return ds, f
}

// requireCXX skips where the cpu device cannot compile kernels: it builds them with the
// system C++ compiler, which a GPU machine running these tests on nvidia may lack.
func requireCXX(t *testing.T) {
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "c++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		t.Skipf("no C++ compiler for the cpu device's kernels: %v", err)
	}
}

// pattern is n bytes that differ for each seed.
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + seed*31 + 1)
	}
	return b
}

func readBytes(t *testing.T, s server.Stream, b *server.Buffer) []byte {
	t.Helper()
	data, err := s.Read(b)
	require.NoError(t, err)
	return data
}

func TestCopyFromEveryDirection(t *testing.T) {
	ds, _ := openCPUDevices(t, 3)
	const n = 1<<20 + 12 // past one staging chunk, and not a multiple of anything
	for i, src := range ds {
		for j, dst := range ds {
			t.Run(fmt.Sprintf("%d to %d", i, j), func(t *testing.T) {
				a := alloc(t, src.Stream, n)
				want := pattern(i*3+j, n)
				require.NoError(t, src.Write(a, want))
				b := alloc(t, dst.Stream, n)
				require.NoError(t, dst.CopyFrom(b, a))
				assert.Equal(t, want, readBytes(t, dst.Stream, b))
				assert.Equal(t, want, readBytes(t, src.Stream, a), "the source is only read")
			})
		}
	}
}

func TestCopyFromDevicesReportTheirPeers(t *testing.T) {
	ds, _ := openCPUDevices(t, 3)
	peers, err := ds[1].Peers()
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2}, peers)
}

func TestCopyFromBadInput(t *testing.T) {
	ds, _ := openCPUDevices(t, 2)
	a := alloc(t, ds[0].Stream, 64)
	b := alloc(t, ds[1].Stream, 64)
	small := alloc(t, ds[1].Stream, 32)
	released := alloc(t, ds[0].Stream, 64)
	require.NoError(t, released.Release())

	assert.ErrorIs(t, ds[1].CopyFrom(small, a), server.ErrInvalidArgument, "sizes differ")
	assert.ErrorIs(t, ds[1].CopyFrom(b, nil), server.ErrInvalidArgument)
	assert.ErrorIs(t, ds[1].CopyFrom(nil, a), server.ErrInvalidArgument)
	assert.ErrorIs(t, ds[1].CopyFrom(a, b), server.ErrForeign, "the destination must be the stream's device's")
	assert.ErrorIs(t, ds[1].CopyFrom(b, released), server.ErrReleased)

	var inside error
	_, err := ds[1].Capture(func(s server.Stream) error {
		inside = s.CopyFrom(b, a)
		return inside
	})
	assert.ErrorIs(t, inside, server.ErrCaptureState, "a graph cannot wait for another device")
	assert.Error(t, err)
}

// Launches on both sides order themselves with the copy: the copy reads what the
// source's kernels wrote, and the destination's kernel reads what the copy wrote, with
// no host synchronization in between.
func TestCopyFromOrderedAgainstLaunches(t *testing.T) {
	requireCXX(t)
	ds, _ := openCPUDevices(t, 2)
	const n = 1 << 16
	zeros := make([]float32, n)
	src := upload(t, ds[0].Stream, zeros...)
	dst := upload(t, ds[1].Stream, zeros...)
	for round := 1; round <= 3; round++ {
		for range round {
			require.NoError(t, ds[0].Launch(devInc, grid(n), server.Args{Buffers: []*server.Buffer{src}, Scalars: []server.Scalar{server.U32(n)}}))
		}
		require.NoError(t, ds[1].CopyFrom(dst, src))
		require.NoError(t, ds[1].Launch(devInc, grid(n), server.Args{Buffers: []*server.Buffer{dst}, Scalars: []server.Scalar{server.U32(n)}}))
		// The source keeps changing after the copy was queued: the copy must not see it.
		require.NoError(t, ds[0].Launch(devInc, grid(n), server.Args{Buffers: []*server.Buffer{src}, Scalars: []server.Scalar{server.U32(n)}}))
	}
	// src: 1+2+3 increments and one after each copy = 9; the last copy saw 1+1+2+1+3 = 8.
	got := readFloats(t, ds[1].Stream, dst)
	assert.Equal(t, float32(9), got[0])
	assert.Equal(t, float32(9), got[n-1])
	assert.Equal(t, float32(9), readFloats(t, ds[0].Stream, src)[n-1])
}

func TestCopyFromFailureOfTheCopyStaysWithTheDestination(t *testing.T) {
	ds, f := openCPUDevices(t, 2)
	a := upload(t, ds[0].Stream, 1, 2, 3, 4)
	b := upload(t, ds[1].Stream, 0, 0, 0, 0)
	other := upload(t, ds[1].Stream, 5, 6, 7, 8)
	require.True(t, f.FailNext("hipMemcpyPeerAsync", 1, hipsys.ErrorIllegalAddress))

	err := ds[1].CopyFrom(b, a)
	require.ErrorIs(t, err, hipsys.ErrorIllegalAddress)
	_, err = ds[1].Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorIllegalAddress, "the destination carries the failure")
	assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, ds[0].Stream, a), "the source is untouched")
	assert.Equal(t, []float32{5, 6, 7, 8}, readFloats(t, ds[1].Stream, other), "nothing else is touched")

	// A later copy that succeeds recovers the destination, as a write does.
	require.NoError(t, ds[1].CopyFrom(b, a))
	assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, ds[1].Stream, b))
}

// A platform call on the source's side failing fails the copy too: the destination
// carries it, the source does not.
func TestCopyFromSourceSideCallFailureStaysWithTheDestination(t *testing.T) {
	ds, f := openCPUDevices(t, 2)
	a := upload(t, ds[0].Stream, 1, 2)
	b := upload(t, ds[1].Stream, 0, 0)
	require.True(t, f.Fail("hipEventCreateWithFlags", hipsys.ErrorOutOfMemory))
	require.ErrorIs(t, ds[1].CopyFrom(b, a), hipsys.ErrorOutOfMemory)
	f.Reset()
	_, err := ds[1].Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorOutOfMemory)
	assert.Equal(t, []float32{1, 2}, readFloats(t, ds[0].Stream, a))
}

func TestCopyFromSourceFailurePassesOn(t *testing.T) {
	ds, f := openCPUDevices(t, 2)
	a := alloc(t, ds[0].Stream, 16)
	b := upload(t, ds[1].Stream, 0, 0, 0, 0)
	// The source's write fails: it carries the failure.
	require.True(t, f.Fail("hipMemcpyHtoDAsync", hipsys.ErrorLaunchFailure))
	require.True(t, f.Fail("hipMemcpyHtoD", hipsys.ErrorLaunchFailure))
	require.Error(t, ds[0].Write(a, floatBytes(1, 2, 3, 4)))
	f.Reset()

	err := ds[1].CopyFrom(b, a)
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	_, err = ds[1].Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "the destination takes the source's failure")
	_, err = ds[0].Read(a)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "the source keeps it")
}

// Every ordered pair copies at once, from its own goroutine, in both directions, while
// each Device is also used for writes: no Device touches another's streams or pools.
func TestCopyFromConcurrentTrafficOnAllPairs(t *testing.T) {
	ds, _ := openCPUDevices(t, 4)
	const n = 256 << 10
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(ds)*len(ds)*rounds)
	for i, src := range ds {
		for j, dst := range ds {
			if i == j {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					if err := copyRound(src, dst, pattern(i*16+j*4+r, n)); err != nil {
						errs <- fmt.Errorf("%d to %d, round %d: %w", i, j, r, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// copyRound writes want on src, copies it to a new buffer on dst and reads it back.
func copyRound(src, dst *server.Device, want []byte) error {
	a, err := src.Alloc(uint64(len(want)))
	if err != nil {
		return err
	}
	defer a.Release()
	b, err := dst.Alloc(uint64(len(want)))
	if err != nil {
		return err
	}
	defer b.Release()
	if err := src.Write(a, want); err != nil {
		return err
	}
	if err := dst.CopyFrom(b, a); err != nil {
		return err
	}
	got, err := dst.Read(b)
	if err != nil {
		return err
	}
	if string(got) != string(want) {
		return fmt.Errorf("copied bytes differ")
	}
	return nil
}

// Two Devices of different platform instances have no peer path: the copy goes through
// the host, with the same results and failure rules.
func TestCopyFromThroughTheHost(t *testing.T) {
	one, _ := openCPUDevices(t, 1)
	two, _ := openCPUDevices(t, 1)
	a := upload(t, one[0].Stream, 1, 2, 3)
	b := upload(t, two[0].Stream, 0, 0, 0)
	require.NoError(t, two[0].CopyFrom(b, a))
	assert.Equal(t, []float32{1, 2, 3}, readFloats(t, two[0].Stream, b))
}

// TestCopyFromOnTheTestPlatform runs on the platform hipsys.Open("auto") picks (nvidia
// on a GPU machine): two Devices on device 0 copy through the same-GPU path, and where
// the platform has a second device, device 1 copies from device 0 by the peer path, or
// through the host when the GPUs cannot reach each other.
func TestCopyFromOnTheTestPlatform(t *testing.T) {
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	f := faults.Wrap(p)
	n, err := f.GetDeviceCount()
	require.NoError(t, err)
	open := func(index int) *server.Device {
		d, err := server.OpenPlatform(f, server.Options{Index: index, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		t.Cleanup(func() { f.Reset(); assert.NoError(t, d.Close()) })
		return d
	}
	ds := []*server.Device{open(0), open(0)}
	if n > 1 {
		ds = append(ds, open(1))
	}
	const size = 8<<20 + 4
	for i := 1; i < len(ds); i++ {
		src, dst := ds[0], ds[i]
		a := alloc(t, src.Stream, size)
		want := pattern(i, size)
		require.NoError(t, src.Write(a, want))
		b := alloc(t, dst.Stream, size)
		require.NoError(t, dst.CopyFrom(b, a), "device %d to %d", src.Index(), dst.Index())
		assert.Equal(t, want, readBytes(t, dst.Stream, b))

		// The copy's failure stays with the destination: whichever call the route makes.
		for _, call := range []string{"hipMemcpyDtoDAsync", "hipMemcpyPeerAsync", "hipMemcpyHtoDAsync", "hipMemcpyHtoD"} {
			require.True(t, f.Fail(call, hipsys.ErrorIllegalAddress))
		}
		require.ErrorIs(t, dst.CopyFrom(b, a), hipsys.ErrorIllegalAddress)
		f.Reset()
		_, err := dst.Read(b)
		assert.ErrorIs(t, err, hipsys.ErrorIllegalAddress)
		assert.Equal(t, want, readBytes(t, src.Stream, a), "the source is untouched")
	}
	if n < 2 {
		t.Logf("%s has one device: the peer path between GPUs was not exercised", p.Name())
	}
}

// Through the host, a source carrying a failure passes it on as well.
func TestCopyFromThroughTheHostPassesTheSourcesFailureOn(t *testing.T) {
	one, f := openCPUDevices(t, 1)
	two, _ := openCPUDevices(t, 1)
	a := alloc(t, one[0].Stream, 12)
	b := upload(t, two[0].Stream, 0, 0, 0)
	require.True(t, f.Fail("hipMemcpyHtoDAsync", hipsys.ErrorLaunchFailure))
	require.True(t, f.Fail("hipMemcpyHtoD", hipsys.ErrorLaunchFailure))
	require.Error(t, one[0].Write(a, floatBytes(1, 2, 3)))
	f.Reset()
	require.ErrorIs(t, two[0].CopyFrom(b, a), hipsys.ErrorLaunchFailure)
	_, err := two[0].Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
}

// Each Device allocates from its own device: its memory is charged to that device of
// the platform, never to the device another Device (or the calling thread) has current.
func TestDevicesAllocateOnTheirOwnDevice(t *testing.T) {
	ds, f := openCPUDevices(t, 3)
	free := func(dev int) uint64 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		require.NoError(t, f.SetDevice(dev))
		n, _, err := f.MemGetInfo()
		require.NoError(t, err)
		return n
	}
	before := []uint64{free(0), free(1), free(2)}
	const size = 64 << 20
	b := alloc(t, ds[2].Stream, size)
	require.NoError(t, ds[2].Write(b, make([]byte, size)))
	after := []uint64{free(0), free(1), free(2)}
	assert.Equal(t, before[0], after[0], "device 0 untouched")
	assert.Equal(t, before[1], after[1], "device 1 untouched")
	assert.GreaterOrEqual(t, before[2]-after[2], uint64(size), "device 2 holds the buffer")
}

func TestCopyFromContext(t *testing.T) {
	ds, _ := openCPUDevices(t, 2)
	a := upload(t, ds[0].Stream, 1, 2, 3)
	b := upload(t, ds[1].Stream, 0, 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, ds[1].CopyFromContext(ctx, b, a))
	assert.Equal(t, []float32{1, 2, 3}, readFloats(t, ds[1].Stream, b))

	require.NoError(t, ds[0].Write(a, floatBytes(4, 5, 6)))
	cancel()
	assert.ErrorIs(t, ds[1].CopyFromContext(ctx, b, a), context.Canceled)
	assert.Equal(t, []float32{1, 2, 3}, readFloats(t, ds[1].Stream, b), "a context done at the start queues nothing")
}
