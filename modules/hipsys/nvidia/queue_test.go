package nvidia

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/nvidia/rawdriver"
)

// The queue tests drive a real queue (queue.c's thread, its ring, the waits) over the
// recording launch entry of package rawdriver, on device fakeDev, which no machine has: they
// need no driver and leave a real device's queue alone.
const fakeDev = 63

var fake struct {
	once sync.Once
	p    *Platform
	q    *launchQueue
	err  error
}

// Function handles the fake queue accepts; refused is the one FakeReset refuses.
const (
	fnA     = uintptr(0xa000)
	fnB     = uintptr(0xb000)
	refused = uintptr(0xdead)
)

// fakeQueue is the fake device's queue, held for the test, recording from empty.
func fakeQueue(t *testing.T, refuse uintptr, delayUS uint) (*launchQueue, hipsys.LaunchQueue) {
	t.Helper()
	fake.once.Do(func() {
		p := &Platform{ndev: fakeDev + 1}
		for _, fn := range []uintptr{fnA, fnB, refused} {
			p.functions.put(uncheckedFunc(fn))
		}
		fake.p = p
		fake.q, fake.err = p.launchQueue(fakeDev, rawdriver.FakeLaunchEntry())
	})
	require.NoError(t, fake.err)
	h, err := fake.q.hold("test", fakeDev)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	h.Settle(nil)
	rawdriver.FakeReset(refuse, delayUS)
	return fake.q, h
}

// uncheckedFunc is a function whose parameters nothing told (a driver older than CUDA
// 12.4 and an image it cannot read): its launches' arguments are not compared, so the
// queue's tests pass whatever arguments they need.
func uncheckedFunc(fn uintptr) *kernelFunc {
	return &kernelFunc{handle: fn, name: "fake", paramsErr: errors.New("no parameters known")}
}

func argsOf(v uint64) *hipsys.KernelArgs { return new(hipsys.KernelArgs).U64(v).U32(7) }

// launchOne queues fn over one thread on the null stream with args.
func launchOne(h hipsys.LaunchQueue, fn uintptr, args *hipsys.KernelArgs) (uint64, []hipsys.LaunchRefusal, error) {
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	return h.Launch(hipsys.Function(fn), one, one, 0, hipsys.NullStream, args, nil)
}

// requireInOrder checks that the driver saw n launches, carrying 0 .. n-1 in order.
func requireInOrder(t *testing.T, n int) {
	t.Helper()
	calls := rawdriver.FakeCalls()
	require.Len(t, calls, n)
	for i, c := range calls {
		require.Equal(t, uint64(i), c.Arg, "launch %d reached the driver out of order or with another's arguments", i)
	}
}

func TestQueueIssuesInOrderWithTheirArguments(t *testing.T) {
	_, h := fakeQueue(t, 0, 0)
	const n = 3000 // past the ring's 256 slots many times
	for i := range n {
		seq, ref, err := h.Launch(hipsys.Function(fnA), hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 32, Y: 1, Z: 1}, 0, hipsys.NullStream, argsOf(uint64(i)), nil)
		require.NoError(t, err)
		require.Empty(t, ref)
		require.Equal(t, uint64(i+1), seq-firstSeq(t, h, seq, i), "seqs count up by one")
	}
	require.Empty(t, h.Settle(nil))
	calls := rawdriver.FakeCalls()
	require.Len(t, calls, n)
	self := rawdriver.ThreadSelf()
	for i, c := range calls {
		require.Equal(t, fnA, c.Fn)
		require.Equal(t, uint64(i), c.Arg, "launch %d reached the driver out of order or with another's arguments", i)
		require.NotEqual(t, self, c.Thread, "this thread's device is not the queue's: every launch goes through the queue's thread")
	}
}

var seqBase = map[hipsys.LaunchQueue]uint64{}

// firstSeq is the seq before a test's first launch (the queue is shared across tests).
func firstSeq(t *testing.T, h hipsys.LaunchQueue, seq uint64, i int) uint64 {
	if i == 0 {
		seqBase[h] = seq - 1
	}
	return seqBase[h]
}

func TestQueueReturnsEachRefusalOnce(t *testing.T) {
	_, h := fakeQueue(t, refused, 0)
	const n = 1000
	want := map[uint64]bool{}
	var got []hipsys.LaunchRefusal
	for i := range n {
		fn := fnA
		if i%97 == 5 {
			fn = refused
		}
		seq, ref, err := launchOne(h, fn, argsOf(uint64(i)))
		require.NoError(t, err, "a queued launch's refusal comes later")
		if fn == refused {
			want[seq] = true
		}
		for _, r := range ref {
			require.Less(t, seq-r.Seq, uint64(h.Depth())+1, "a refusal comes back within Depth launches")
		}
		got = append(got, ref...)
	}
	got = h.Settle(got)
	seen := map[uint64]bool{}
	for _, r := range got {
		require.True(t, want[r.Seq], "launch %d was not refused", r.Seq)
		require.False(t, seen[r.Seq], "launch %d's refusal came back twice", r.Seq)
		seen[r.Seq] = true
		var he *hipsys.Error
		require.ErrorAs(t, r.Err, &he)
		require.Equal(t, hipsys.ErrorInvalidValue, he.Status)
		require.Equal(t, "hipModuleLaunchKernel", he.Call)
	}
	require.Len(t, seen, len(want))
	require.Empty(t, h.Settle(nil), "settled: nothing more to return")
}

func TestQueueIsSettledByEveryOtherCall(t *testing.T) {
	_, h := fakeQueue(t, 0, 300)
	for i := range 10 {
		_, _, err := launchOne(h, fnA, argsOf(uint64(i)))
		require.NoError(t, err)
	}
	require.Less(t, len(rawdriver.FakeCalls()), 10, "a 300 µs launch each: not all issued yet")
	// Another goroutine's call on the device, as any trampoline begins.
	done := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		old := swapDevice(fakeDev)
		settleCurrent()
		swapDevice(old)
		done <- len(rawdriver.FakeCalls())
	}()
	require.Equal(t, 10, <-done, "the call waited for every launch queued before it")
}

func TestQueueIssuesDirectlyUnlessLaunchesLoop(t *testing.T) {
	q, h := fakeQueue(t, 0, 0)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old := swapDevice(fakeDev)
	defer swapDevice(old)
	self := rawdriver.ThreadSelf()
	launch := func(i int) {
		_, _, err := launchOne(h, fnB, argsOf(uint64(i)))
		require.NoError(t, err)
	}
	waitParked := func() {
		deadline := time.Now().Add(5 * time.Second)
		for !q.parked() {
			require.True(t, time.Now().Before(deadline), "the queue's thread never parked")
			time.Sleep(50 * time.Microsecond)
		}
	}
	waitParked()
	settleCurrent() // as a sync would: the run starts here
	// A pause of this thread between two launches must not make them look far apart.
	q.gap = time.Hour
	defer func() { q.gap = handoffGap }()
	// A loop: the first handoffRun launches go to the driver here; the next kicks the
	// thread awake and they go on here until it runs, and from then on through it.
	// Launches of some 50 µs (a usleep), so that the wake-up takes a few, not thousands.
	rawdriver.FakeReset(0, 1)
	deadline := time.Now().Add(5 * time.Second)
	n := 0
	for ; ; n++ {
		launch(n)
		if n > handoffRun && !q.parked() && n%64 == 0 {
			// Awake: the launches that follow go through it. A few more, then stop.
			for range 20 {
				n++
				launch(n)
			}
			n++
			break
		}
		require.True(t, time.Now().Before(deadline), "the thread was never woken")
	}
	h.Settle(nil)
	calls := rawdriver.FakeCalls()
	require.Len(t, calls, n)
	through := -1 // the first launch the thread issued
	for i, c := range calls {
		require.Equal(t, uint64(i), c.Arg, "in order across the handoff")
		if i < handoffRun {
			require.Equal(t, self, c.Thread, "launch %d: before the loop is seen, on the caller's thread", i)
		}
		if c.Thread != self && through < 0 {
			through = i
		}
		if through >= 0 {
			require.NotEqual(t, self, c.Thread, "launch %d: once the thread took over, every launch of the loop goes through it", i)
		}
	}
	require.Greater(t, through, handoffRun-1, "the thread took over, after the first launches")
	// Launch then another call, again and again (launch, sync): always on the caller's
	// thread, the queue's parked or still spinning from the loop just before.
	rawdriver.FakeReset(0, 0)
	settleCurrent()
	for i := range 10 {
		launch(i)
		settleCurrent()
	}
	for i, c := range rawdriver.FakeCalls() {
		require.Equal(t, self, c.Thread, "launch %d of a launch-and-sync loop went through the queue", i)
	}
	// Launches far apart, with no call between: each directly.
	q.gap = handoffGap
	rawdriver.FakeReset(0, 0)
	for i := range 5 {
		launch(i)
		time.Sleep(2 * handoffGap)
	}
	for i, c := range rawdriver.FakeCalls() {
		require.Equal(t, self, c.Thread, "launch %d, %v after the last, went through the queue", i, 2*handoffGap)
	}
}

func TestQueueHasOneHolder(t *testing.T) {
	q, h := fakeQueue(t, 0, 0)
	_, err := q.hold("test", fakeDev)
	var he *hipsys.Error
	require.ErrorAs(t, err, &he)
	require.Equal(t, hipsys.ErrorContextAlreadyInUse, he.Status)
	require.NoError(t, h.Close())
	require.NoError(t, h.Close(), "a second Close is a no-op")
	_, _, err = launchOne(h, fnA, nil)
	require.ErrorAs(t, err, &he, "a closed handle launches nothing")
	h2, err := q.hold("test", fakeDev)
	require.NoError(t, err, "given back by Close")
	require.NoError(t, h2.Close())
}

func TestQueueChecksHandlesFirst(t *testing.T) {
	_, h := fakeQueue(t, 0, 0)
	_, _, err := launchOne(h, 0x1234, nil)
	var he *hipsys.Error
	require.ErrorAs(t, err, &he)
	require.Equal(t, hipsys.ErrorInvalidHandle, he.Status)
	_, _, err = h.Launch(hipsys.Function(fnA), hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 1, Y: 1, Z: 1}, 0, hipsys.Stream(0x999), nil, nil)
	require.ErrorAs(t, err, &he)
	require.Equal(t, hipsys.ErrorInvalidHandle, he.Status)
	require.Empty(t, h.Settle(nil))
	require.Empty(t, rawdriver.FakeCalls(), "nothing reached the driver")
}

func TestQueueRefusesRefusalsCloseReportsThem(t *testing.T) {
	q, h := fakeQueue(t, refused, 0)
	_, _, err := launchOne(h, refused, nil)
	require.NoError(t, err)
	err = h.Close()
	require.ErrorContains(t, err, "hipErrorInvalidValue", "Close returns what was not yet returned")
	h2, err := q.hold("test", fakeDev)
	require.NoError(t, err)
	require.Empty(t, h2.Settle(nil), "the next holder does not inherit it")
	require.NoError(t, h2.Close())
}

func TestQueueConcurrentSettles(t *testing.T) {
	_, h := fakeQueue(t, 0, 0)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			old := swapDevice(fakeDev)
			defer swapDevice(old)
			for {
				select {
				case <-stop:
					return
				default:
					settleCurrent()
				}
			}
		}()
	}
	for i := range 2000 {
		_, _, err := launchOne(h, fnA, argsOf(uint64(i)))
		require.NoError(t, err)
	}
	close(stop)
	wg.Wait()
	h.Settle(nil)
	requireInOrder(t, 2000)
}

// A producer that outruns the driver waits for room (blocked in C, queue.c's
// cubehip_q_wait) and loses nothing: 600 launches of 20 µs each through a 256-slot ring.
func TestQueueWaitsForRoom(t *testing.T) {
	q, h := fakeQueue(t, refused, 20)
	var got []hipsys.LaunchRefusal
	for i := range 600 {
		fn := fnA
		if i == 3 || i == 400 {
			fn = refused
		}
		_, ref, err := launchOne(h, fn, argsOf(uint64(i)))
		require.NoError(t, err)
		require.LessOrEqual(t, q.tail-q.head, uint64(h.Depth()), "never more than the ring in flight")
		got = append(got, ref...)
	}
	require.NotEmpty(t, got, "the first refusal came back from a launch that needed its slot")
	got = h.Settle(got)
	require.Len(t, got, 2)
	requireInOrder(t, 600)
}

// A launch too big for a slot is issued on the caller's thread, after the queue is
// settled and with the refusals of the launches before it: a launch issued directly
// comes after every refusal has been returned, so its caller can tell whether it read
// what a refused launch never wrote.
func TestQueueTooBigForASlot(t *testing.T) {
	_, h := fakeQueue(t, refused, 0)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := range 5 { // this thread's device is not the queue's: all queued
		fn := fnA
		if i == 3 {
			fn = refused
		}
		_, _, err := launchOne(h, fn, argsOf(uint64(i)))
		require.NoError(t, err)
	}
	old := swapDevice(fakeDev)
	defer swapDevice(old)
	big := new(hipsys.KernelArgs).U64(5)
	for range 20 {
		big.U32(1)
	}
	seq, ref, err := launchOne(h, fnB, big)
	require.NoError(t, err)
	require.Zero(t, seq, "issued directly")
	calls := rawdriver.FakeCalls()
	require.Len(t, calls, 6)
	require.Equal(t, fnB, calls[5].Fn)
	require.Equal(t, uint64(5), calls[5].Arg)
	require.Equal(t, rawdriver.ThreadSelf(), calls[5].Thread)
	var seqs []uint64
	for _, r := range ref {
		seqs = append(seqs, r.Seq)
	}
	require.Len(t, seqs, 1, "the refusal before it came back with it")
	require.Empty(t, h.Settle(nil))
}
