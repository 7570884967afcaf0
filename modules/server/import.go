package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// ImportOption changes how Import hands the memory back.
type ImportOption int

// ReleaseOnCaller lets an import's release run on the goroutine that releases the buffer,
// when nothing queued still uses the memory: the release is then called before
// Buffer.Release returns, with no lock of the Device held, instead of on a goroutine of
// the Device's. It is for a release that costs a thread handoff (a Python deleter takes
// the interpreter's lock, which the releasing thread already holds); the release must
// then not wait for anything the releasing goroutine holds.
const ReleaseOnCaller ImportOption = 1

// Import makes size bytes at ptr, device memory that another library allocated and
// owns (a CuPy array's, a PyTorch tensor's; on the cpu platform, whose device memory is
// host memory, any host memory such as a numpy array's), a Buffer homed on the stream,
// without copying it. The platform checks the range first: a null ptr, a size of 0, a
// range running past the end of the address space or of its allocation, memory of
// another device and memory that is not this platform's device memory (host memory on
// a GPU, an unmapped address on the cpu device) are errors saying which.
//
// The buffer works everywhere an allocated one does: launch arguments, views, Read,
// Write, CopyFrom, capture and replay, and a failed write leaves it carrying the failure.
// Writes through it are writes to the owner's memory, and the owner's writes show
// through it: the caller orders the two sides as for DevicePointer (the owner's pending
// work on the memory done before the Device's starts).
//
// The Device never frees the memory and never hands it to another allocation. It calls
// release exactly once, on a goroutine of its own (never the caller's), when the memory
// is no longer used: after Release, once no graph that recorded work on the buffer is
// left (Graph.Destroy) and the stream's work queued until then is done. The release
// starts at the call that drops the last use (Release, Graph.Destroy) or, where that
// was work of another stream, once that stream's release worker has given the buffer
// back after the work is done, with no further call needed (a goroutine of the Device's
// takes its lock for it); Close releases every import still held and returns after
// their releases have. When Import fails, release is not called: the memory is still
// the caller's alone.
//
// Imported memory is not counted in MemoryUsage or MemoryReport: the pools neither
// allocated it nor can free it.
//
// With ReleaseOnCaller the release may instead run on the goroutine whose
// Buffer.Release (or Recycle) drops the last use, before that call returns, when the
// stream's work is already done by then; otherwise it runs as above.
func (s Stream) Import(ptr hipsys.DevicePtr, size uint64, release func(), opts ...ImportOption) (*Buffer, error) {
	d := s.d
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	if ptr == 0 || size == 0 {
		return nil, fmt.Errorf("import: %w: %d bytes at %#x (a null pointer or no bytes)", ErrInvalidArgument, size, uint64(ptr))
	}
	onCaller := false
	for _, o := range opts {
		onCaller = onCaller || o == ReleaseOnCaller
	}
	h, err := d.srv.Import(ptr, size, release, s.id, onCaller)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	b, err := s.buffer(h, size)
	if b != nil {
		b.imported = true
	}
	return b, err
}

// NativeHandle is the platform's own handle of the stream's device stream: a CUstream on
// nvidia and a hipStream_t on amd, which another library in the process may wait on or
// make wait (CuPy's and PyTorch's DLPack export take it as their stream argument, and
// order their pending work on a tensor before it). The device stream is created if it
// was not yet. Launches of the Device are issued to it in order, after anything the
// other library queued on it first. On the cpu platform the handle is the platform's
// own number for the stream, meaningless outside cubehip.
//
// The handle stays valid until Close. The other library must not destroy it, and work it
// queues on it runs in the Device's order: a failure of that work is not the Device's to
// report.
//
// Once the handle is out, the stream is shared, for the rest of the Device's life: the
// Device no longer infers anything about it that the driver does not say (that it is
// idle, that a completion flag covers its work), and every wait on it is the driver's
// own. So a Read is ordered after everything queued on the stream before the Read,
// by the Device or by the other library (an event wait the other library queued there
// included), and a Sync waits for all of it. The Device's launches on a shared stream
// reach the driver before Launch returns (not through the launch queue), so what the
// other library queues on the handle afterwards runs after them; any other wait for
// that work is the other library's to make.
func (s Stream) NativeHandle() (uint64, error) {
	d := s.d
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	h, err := d.srv.NativeStream(s.id)
	if err != nil {
		return 0, fmt.Errorf("native stream handle: %w", err)
	}
	return uint64(h), nil
}
