package cpu

import (
	"fmt"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// cmdKind says what a queued command does.
type cmdKind uint8

const (
	cmdLaunch    cmdKind = iota // run a kernel
	cmdMemset                   // fill size bytes at dst with value
	cmdCopy                     // copy size bytes from src to dst
	cmdCopy2D                   // pitched copy
	cmdRecord                   // stamp an event
	cmdWait                     // wait until stream target has completed seq commands
	cmdWaitEvent                // a captured wait: resolved to a cmdWait when the graph launches
	cmdHost                     // call host on the worker (hipLaunchHostFunc's shape; tests gate streams with it)
	cmdFault                    // fail with fault on the worker, as a faulting kernel does (FailOnDevice)
)

// command is one unit of queued work. Commands are recycled by their stream (the
// params and offsets buffers keep their capacity), which is what lets a steady stream
// of launches allocate nothing. Graph nodes are commands too, owned by their graph.
type command struct {
	kind cmdKind

	dst, src       uintptr
	dstHost        bool // dst is pinned host memory (else device memory)
	srcHost        bool
	size           uint64 // linear copy/memset length; 2D: bytes per row
	value          byte
	dpitch, spitch uint64
	height         uint64

	fn      *function
	coop    bool // a cooperative launch: every block at once (jit.Function.LaunchCooperative)
	grid    hipsys.Dim3
	block   hipsys.Dim3
	shmem   uint32
	params  []byte
	offsets []uint32

	ev  *event
	gen uint64 // the event's generation this record stamps

	target *stream
	seq    uint64

	host  func()
	fault error
}

// assign makes c a copy of t, reusing c's argument buffers. The copy is what frees the
// caller to reuse its KernelArgs (and a graph its nodes) once the call returns.
func (c *command) assign(t *command) {
	params, offsets := c.params, c.offsets
	*c = *t
	c.params = append(params[:0], t.params...)
	c.offsets = append(offsets[:0], t.offsets...)
}

// clear drops c's references, so a recycled command pins no function, event or stream.
func (c *command) clear() {
	params, offsets := c.params[:0], c.offsets[:0]
	*c = command{params: params, offsets: offsets}
}

// nodeType is the graph node type a captured command becomes.
func (c *command) nodeType() hipsys.GraphNodeType {
	switch c.kind {
	case cmdLaunch:
		return hipsys.GraphNodeKernel
	case cmdMemset:
		return hipsys.GraphNodeMemset
	case cmdCopy, cmdCopy2D:
		return hipsys.GraphNodeMemcpy
	case cmdRecord:
		return hipsys.GraphNodeEventRecord
	case cmdWait, cmdWaitEvent:
		return hipsys.GraphNodeWaitEvent
	case cmdHost:
		return hipsys.GraphNodeHost
	}
	return hipsys.GraphNodeEmpty
}

// exec runs the command on its stream's worker. A panic (a broken invariant; a kernel
// that faults is a launch error, never a panic) becomes the stream's error
// rather than taking the whole process down with a Go panic in a goroutine nobody owns.
func (c *command) exec() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errorf("hipStreamSynchronize", hipsys.ErrorLaunchFailure, fmt.Sprint("worker panic: ", r))
		}
	}()
	switch c.kind {
	case cmdLaunch:
		return c.fn.launch(c)
	case cmdMemset:
		fill(bytesAt(c.dst, c.size), c.value)
	case cmdCopy:
		copy(bytesAt(c.dst, c.size), bytesAt(c.src, c.size))
	case cmdCopy2D:
		for row := uint64(0); row < c.height; row++ {
			copy(bytesAt(c.dst+uintptr(row*c.dpitch), c.size), bytesAt(c.src+uintptr(row*c.spitch), c.size))
		}
	case cmdRecord:
		c.ev.stamp(c.gen, time.Now())
	case cmdWait:
		// Work ordered after failed work fails with it, as on a GPU, where a fault
		// stops every stream of the context: the waiting stream reports the failure at
		// its own next synchronization, and never runs on as if its input were written.
		c.target.waitFor(c.seq)
		if failure := c.target.failedBy(c.seq); failure != nil {
			return failure
		}
	case cmdHost:
		c.host()
	case cmdFault:
		return c.fault
	}
	return nil
}

// fill sets every byte of b to v: clear (memclr) for zero, otherwise doubling copies,
// which run at memmove speed instead of a byte loop's.
func fill(b []byte, v byte) {
	if len(b) == 0 {
		return
	}
	if v == 0 {
		clear(b)
		return
	}
	b[0] = v
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}
