package nvidia

// #include "trampolines.h"
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// handoffRun is how many launches in a row, with no other call between them, go
// straight to the driver on the caller's thread before the queue's parked thread is
// woken to take the next ones. A launch followed by a sync or a read (a latency-bound
// caller) never wakes it and pays nothing over ModuleLaunchKernel (the queue's tests
// check that such launches are issued on the caller's thread). A loop of launches
// kicks the thread awake (one futex call) and goes on launching directly until the
// thread is seen running, then queues: the wake-up's latency, tens of microseconds on a
// virtual machine's idle CPU, is never waited for. With 2, a caller that makes two
// launches between syncs (a kernel and its follow-up) never wakes the thread either; no
// other value was measured.
const handoffRun = 2

// handoffGap is how close two launches must follow each other for the second to count
// as a loop: launches further apart (a caller with work of its own between them) go to
// the driver directly however long their run, since each would otherwise pay a
// wake-up. The gap is a few empty launches (docs/benchmarks.md, "The launch queue") and
// a fraction of the thread's spin (queue.c's CUBEHIP_Q_SPIN_NS); no other value was measured.
const handoffGap = 20 * time.Microsecond

// refillFree is how many slots a producer that found the ring full waits for. It sleeps
// until then, and the queue's thread pays a wake-up (a futex call on its own path) once
// per refillFree launches: with half the ring, a small part of a launch's cost
// (docs/benchmarks.md, "The launch queue"), while the launches still queued keep the
// driver busy while the producer wakes. No other value was measured.
const refillFree = C.CUBEHIP_Q_SLOTS / 2

// launchQueue is the Go side of a device's queue.h ring: the producer. It lives as long
// as the process (the C thread parks when idle); holders take and give it back.
type launchQueue struct {
	mu      sync.Mutex // serializes producers: holders are serialized, settle is not
	p       *Platform
	q       *C.cubehip_queue
	held    atomic.Bool
	tail    uint64        // slots filled: the producer's copy of q.tail
	head    uint64        // q.head as last read: slots the thread has issued, at least
	checked uint64        // slots up to which refusals were collected
	nfail   uint64        // refusals collected: q.nfail once all are
	kicked  uint32        // q.parks when the thread was last kicked: one kick per park
	last    time.Time     // the last launch issued directly
	gap     time.Duration // handoffGap (the tests widen it, to take the scheduler out)
	slots   []C.cubehip_qslot
}

var (
	_ hipsys.LaunchQueuer  = (*Platform)(nil)
	_ hipsys.LaunchQueue   = (*heldQueue)(nil)
	_ hipsys.FlaggingQueue = (*heldQueue)(nil)
)

// OpenLaunchQueue takes device's queue, starting its thread on first use.
func (p *Platform) OpenLaunchQueue(device int) (hipsys.LaunchQueue, error) {
	const call = "hipOpenLaunchQueue"
	if device < 0 || device >= p.ndev {
		return nil, hipsys.NewError(platformName, call, hipsys.ErrorInvalidDevice, fmt.Sprintf("device %d of %d", device, p.ndev))
	}
	q, err := p.launchQueue(device, unsafe.Pointer(C.cubehip_cu.launchKernel))
	if err != nil {
		return nil, err
	}
	return q.hold(call, device)
}

// launchQueue is device's queue, made on first use with launch as its driver entry (the
// tests give a recording one).
func (p *Platform) launchQueue(device int, launch unsafe.Pointer) (*launchQueue, error) {
	p.queueMu.Lock()
	defer p.queueMu.Unlock()
	if p.queues == nil {
		p.queues = map[int]*launchQueue{}
	}
	if q := p.queues[device]; q != nil {
		return q, nil
	}
	var cq *C.cubehip_queue
	if e := C.cubehip_q_new(C.int(device), (*[0]byte)(launch), &cq); e != 0 {
		return nil, hipsys.NewError(platformName, "hipOpenLaunchQueue", hipsys.ErrorOutOfMemory,
			fmt.Sprintf("starting the launch thread: %v", errnoError(e)))
	}
	q := &launchQueue{p: p, q: cq, gap: handoffGap, slots: unsafe.Slice(&cq.ring[0], C.CUBEHIP_Q_SLOTS)}
	p.queues[device] = q
	return q, nil
}

func (q *launchQueue) hold(call string, device int) (*heldQueue, error) {
	if !q.held.CompareAndSwap(false, true) {
		return nil, hipsys.NewError(platformName, call, hipsys.ErrorContextAlreadyInUse,
			fmt.Sprintf("the launch queue of device %d is held", device))
	}
	C.cubehip_q_publish(q.q, 1)
	return &heldQueue{q: q}, nil
}

// heldQueue is one holder's handle on a queue: Close gives the queue back, and a closed
// handle refuses every call rather than reach a queue someone else now holds.
type heldQueue struct {
	q      *launchQueue
	closed bool
}

var errQueueClosed = errors.New("nvidia: launch queue closed")

func (h *heldQueue) Depth() int { return C.CUBEHIP_Q_SLOTS }

func (h *heldQueue) Launch(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal) (uint64, []hipsys.LaunchRefusal, error) {
	if h.closed {
		return 0, refused, hipsys.NewError(platformName, "hipModuleLaunchKernel", hipsys.ErrorInvalidHandle, errQueueClosed.Error())
	}
	seq, _, refused, err := h.q.launch(fn, grid, block, shmem, s, args, refused, false)
	return seq, refused, err
}

func (h *heldQueue) LaunchFlagged(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal) (uint64, uint32, []hipsys.LaunchRefusal, error) {
	if h.closed {
		return 0, 0, refused, hipsys.NewError(platformName, "hipModuleLaunchKernel", hipsys.ErrorInvalidHandle, errQueueClosed.Error())
	}
	return h.q.launch(fn, grid, block, shmem, s, args, refused, true)
}

func (h *heldQueue) Settle(refused []hipsys.LaunchRefusal) []hipsys.LaunchRefusal {
	if h.closed {
		return refused
	}
	return h.q.settle(refused)
}

func (h *heldQueue) Close() error {
	if h.closed {
		return nil
	}
	refused := h.q.settle(nil)
	h.closed = true
	C.cubehip_q_publish(h.q.q, 0)
	h.q.held.Store(false)
	return hipsys.RefusalsError(refused)
}

// launch is Launch, and LaunchFlagged with flagged: only a launch issued directly is
// flagged.
func (q *launchQueue) launch(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal, flagged bool) (uint64, uint32, []hipsys.LaunchRefusal, error) {
	const call = "hipModuleLaunchKernel"
	p := q.p
	f := p.functions.get(uintptr(fn))
	if f == nil {
		return 0, 0, refused, hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x", uintptr(fn)))
	}
	if err := p.checkStream(call, s); err != nil {
		return 0, 0, refused, err
	}
	// Before anything is queued: a launch the queue's thread issued with too few
	// arguments would crash the process from that thread, past any caller's reach.
	if !f.argsMatch(args) {
		return 0, 0, refused, f.argsError(args)
	}
	if err := p.optIn(call, fn, shmem); err != nil {
		return 0, 0, refused, err
	}
	var buf []byte
	var offs []uint32
	if args != nil {
		buf, offs = args.Buffer(), args.Offsets()
	}
	if len(offs) > C.CUBEHIP_Q_ARGS || len(buf) > C.CUBEHIP_Q_BYTES {
		// Too big for a slot: issued here, after everything queued, and after the
		// refusals among those are collected, as for any launch issued directly.
		refused = q.settle(refused)
		if issued, token, err := q.direct(fn, grid, block, shmem, s, buf, offs, flagged); issued {
			return 0, token, refused, err
		}
		return 0, 0, refused, p.ModuleLaunchKernel(fn, grid, block, shmem, s, args)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	cq := q.q
	run := atomic.AddUint32((*uint32)(unsafe.Pointer(&cq.run)), 1)
	parked := atomic.LoadUint32((*uint32)(unsafe.Pointer(&cq.sleeping))) != 0
	if (parked || run <= handoffRun) &&
		atomic.LoadUint64((*uint64)(unsafe.Pointer(&cq.head))) == q.tail &&
		atomic.LoadUint64((*uint64)(unsafe.Pointer(&cq.nfail))) == q.nfail {
		// The thread has issued everything and every refusal was returned
		// (hipsys.LaunchQueue: a launch issued directly comes after them all), and it is
		// parked, or this launch starts a run (a launch between syncs, reads or writes,
		// even while the thread still spins from a loop before): the launch goes to the
		// driver here, as ModuleLaunchKernel would, unless this thread's current device
		// is another. If it continues a loop, the parked thread is kicked awake to take
		// the launches that follow once it runs.
		if parked && q.loop(run) {
			if parks := atomic.LoadUint32((*uint32)(unsafe.Pointer(&cq.parks))); parks != q.kicked {
				q.kicked = parks
				C.cubehip_q_kick(cq)
			}
		}
		if issued, token, err := q.direct(fn, grid, block, shmem, s, buf, offs, flagged); issued {
			return 0, token, refused, err
		}
	}
	if q.tail-q.head == C.CUBEHIP_Q_SLOTS {
		refused = q.makeRoom(refused)
	}
	slot := &q.slots[q.tail%C.CUBEHIP_Q_SLOTS]
	slot.fn, slot.stream = C.uintptr_t(fn), C.uintptr_t(s)
	slot.grid = [3]C.uint{C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z)}
	slot.block = [3]C.uint{C.uint(block.X), C.uint(block.Y), C.uint(block.Z)}
	slot.shmem = C.uint(shmem)
	slot.n = C.ushort(len(offs))
	for i, o := range offs {
		slot.offs[i] = C.ushort(o)
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&slot.buf[0])), len(buf)), buf)
	q.tail++
	// Tail first, then sleeping: queue.c's wait_fill does the opposite, so either the
	// thread sees this slot before it parks or this sees it parked and wakes it.
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&cq.tail)), q.tail)
	if atomic.LoadUint32((*uint32)(unsafe.Pointer(&cq.sleeping))) != 0 {
		C.cubehip_q_wake(cq)
	}
	return q.tail, 0, refused, nil
}

// direct issues a launch on the calling thread through the queue's driver entry; not
// issued when the thread's current device is not the queue's. A flagged launch is
// followed by its stream's flag write, in the same call: token is its value, 0 if none.
func (q *launchQueue) direct(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream, buf []byte, offs []uint32,
	flagged bool) (issued bool, token uint32, err error) {
	var bp *byte
	var op *uint32
	if len(offs) > 0 {
		bp, op = &buf[0], &offs[0]
	}
	var flag C.uintptr_t
	if flagged {
		flag = q.p.flagOf(s)
	}
	var tok C.uint32_t
	// SAFETY: as ModuleLaunchKernel: Go memory without pointers, read during the call.
	r := C.cu_q_direct(q.q, C.uintptr_t(fn), C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z),
		C.uint(block.X), C.uint(block.Y), C.uint(block.Z), C.uint(shmem), C.uintptr_t(s),
		(*C.uint8_t)(unsafe.Pointer(bp)), (*C.uint32_t)(unsafe.Pointer(op)), C.int(len(offs)), flag, &tok)
	if r == C.CUBEHIP_NOT_CURRENT {
		return false, 0, nil
	}
	return true, uint32(tok), cuError("hipModuleLaunchKernel", int32(r))
}

// loop says whether a launch that finds the thread parked continues a loop: it is past
// the handoffRun-th of a run of launches (no other call between them; queue.h's settle
// breaks runs) that follow each other within handoffGap. Only a launch that may start
// the gap a later one is measured by reads the clock: the earlier ones of a run (every
// launch of a launch-and-sync loop) are issued without the clock read's cost
// (docs/benchmarks.md, "The launch queue"), which a caller waiting for the launch would pay.
func (q *launchQueue) loop(run uint32) bool {
	if run < handoffRun {
		return false
	}
	now := time.Now()
	loop := run > handoffRun && now.Sub(q.last) < q.gap
	q.last = now
	return loop
}

// makeRoom waits until refillFree slots are free, collecting the refusals of the
// launches issued meanwhile before their slots are reused. The wait blocks in C
// (cubehip_q_wait) rather than spin: a producer that outruns the driver would otherwise
// spin most of the time, on a core the queue's thread may share.
func (q *launchQueue) makeRoom(refused []hipsys.LaunchRefusal) []hipsys.LaunchRefusal {
	target := q.tail - (C.CUBEHIP_Q_SLOTS - refillFree)
	if nfail := q.loadIssued(); q.head >= target {
		return q.collect(nfail, refused)
	}
	C.cubehip_q_wait(q.q, C.uint64_t(target))
	return q.collect(q.loadIssued(), refused)
}

// loadIssued reads the thread's indices into q.head and returns its refusal count, read
// after: every slot below q.head then has its final status, and the count includes every
// refusal among them (and perhaps some beyond, which a later collect finds).
func (q *launchQueue) loadIssued() uint64 {
	q.head = atomic.LoadUint64((*uint64)(unsafe.Pointer(&q.q.head)))
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&q.q.nfail)))
}

// collect appends the refusals of the slots issued since the last collect (below
// q.head), each of which the thread flagged in q.status. nfail, from loadIssued, says
// whether any refusal is still uncollected; the scan runs only then, and counts what it
// finds, since nfail may include refusals past q.head that the next scan will find.
func (q *launchQueue) collect(nfail uint64, refused []hipsys.LaunchRefusal) []hipsys.LaunchRefusal {
	if nfail != q.nfail {
		for seq := q.checked; seq < q.head; seq++ {
			st := &q.q.status[seq%C.CUBEHIP_Q_SLOTS]
			if *st != 0 {
				refused = append(refused, hipsys.LaunchRefusal{Seq: seq + 1, Err: cuError("hipModuleLaunchKernel", int32(*st))})
				*st = 0
				q.nfail++
			}
		}
	}
	q.checked = q.head
	return refused
}

// settle waits until the thread has issued every slot filled so far and collects their
// refusals. A queue with nothing filled since the last settle reads nothing the thread
// writes.
func (q *launchQueue) settle(refused []hipsys.LaunchRefusal) []hipsys.LaunchRefusal {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.checked == q.tail {
		return refused
	}
	if nfail := q.loadIssued(); q.head == q.tail {
		return q.collect(nfail, refused)
	}
	C.cubehip_q_wait(q.q, C.uint64_t(q.tail))
	return q.collect(q.loadIssued(), refused)
}

func errnoError(e C.int) error { return fmt.Errorf("errno %d", int(e)) }

// parked says whether the queue's thread is parked, waiting for a wake-up.
func (q *launchQueue) parked() bool {
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&q.q.sleeping))) != 0
}
