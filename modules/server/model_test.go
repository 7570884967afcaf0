package server_test

// The model-based test of cubehip's promise: a read never returns bytes that nothing
// wrote. Random sequences of allocations, writes (whole and at an offset), launches of
// tiny kernels (one of which faults on the device, reported late), syncs on any
// logical id, reads of every size class, graph captures and replays, releases, outside
// work ordered onto a native stream, and failures injected into the HIP calls, run on
// a Device over the cpu platform (behind faults.Platform and modelTrapper), against a
// small reference model that knows, per buffer, which bytes may be read and whether an
// error may (or must) be returned instead. The oracle's rules are the comment below.
// The per-device-stream bookkeeping these rules rest on (which writes a wait confirmed,
// which a failure takes, when a stream is known idle or waited for on a flag) is driven
// directly too, by random sequences against a model of its own invariants:
// TestLedgerRandomSequences in compute/internal/ledger.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server"
)

// The oracle's rules, as the model applies them. Per buffer the model
// keeps alts (every content the buffer may hold: usually one), errOK (an error is an
// acceptable answer to a read) and mustErr (an error is the only acceptable answer).
//
//  1. A read that returns nil must return one of alts' bytes (the range read); any
//     other bytes are always a bug. A read that returns nil from a mustErr buffer is a
//     bug (the bytes of work that failed: a launch refused at the call, or the model's
//     trap kernel, which faults on the device and writes nothing).
//  2. A read may return an error only when the buffer may carry a failure: errOK, or a
//     write of it on a device stream that no successful Sync confirmed since while a
//     device fault is pending on that stream; or when the read's own call met a
//     failure: an injected failure consumed during the read, or a device fault pending
//     on any device stream (a read waits on events of the staging ring, which any
//     stream may have recorded: when in doubt an error is allowed).
//  3. errOK is set on a buffer: by work that wrote it on a device stream while a device
//     fault was pending there; by a trap queued on a device stream, for every buffer
//     with an unconfirmed write there; by an injected failure of a wait (hipStream/
//     EventSynchronize, hipStream/EventQuery) anywhere in a call, for every buffer with
//     an unconfirmed write on any device stream (the model does not know which
//     stream's event failed); by a failed Sync of a device stream, for its unconfirmed
//     writes; by an injected failure consumed by the call that wrote it; by an input
//     that was errOK (the failure is passed on). A whole successful rewrite clears
//     errOK and mustErr; a partial one clears neither (the rest of the bytes are as
//     unknown as before: the buffer must keep carrying a certain failure).
//  4. A write is confirmed by a Sync that returned nil on any id of its device stream
//     (id % MaxStreams): no later failure may be carried by it (rule 2 stops applying
//     to that stream's write). This is compute/internal/ledger/confirm.go's rule; the model confirms
//     only at Sync (a successful wait inside another call confirms too, which only
//     makes the server stricter than the model).
//  5. mustErr: a launch whose hipModuleLaunchKernel was failed by injection; a trap
//     launch or replay; a launch or replay whose input was mustErr (a same-stream
//     input fails the output by rule 3, a cross-stream one must not read the bytes
//     computed from what the faulted work left unwritten).
//  6. A call that returns an error (not a read): acceptable only when an injected
//     failure was consumed in it, a device fault is pending somewhere, or one of its
//     buffers may carry a failure; its output may then hold its old bytes, its new
//     bytes, or carry a failure (never a mix of the two: a multi-chunk write that
//     failed halfway must carry the failure). A Sync error is acceptable only when an
//     injected failure was consumed or a fault is pending on its device stream.
//  8. Reads are not ordered across streams by the server (stream/order.go: the
//     client's to order, as in CubeCL), so before work writes a buffer that queued work
//     on another device stream reads, the model Syncs that stream (logged as an op).
//  7. Outside work (a memset queued by "another library" on a stream of its own, then
//     ordered onto the Device's native stream with an event wait) is the Device's order
//     on that device stream: a read there reads the outside bytes. Until a Sync of that
//     device stream, a read from another device stream may see the bytes before it too.
//  9. A device fault pending on device stream F may be reported to any call (a staging
//     chunk's wait inside a write, an allocation's), which returns nil, acknowledges
//     it, and leaves what it blames carrying it; the Sync of F after it succeeds. So
//     before every op, for every F with a fault pending, errOK is set on F's
//     unconfirmed writes and on the unconfirmed writes of every device stream ordered
//     after F's unconfirmed work made after that ordering, transitively
//     (model_order_test.go; compute/internal/ledger/confirm.go, takeOrderedLocked, blames the same). An
//     op on D that is given a buffer allocated or ever written on another device stream
//     S may order D after S (the model takes every such S: more than the server's
//     waits, which only lets it accept more errors); a Sync of D confirms D's orderings.
//     Not failed, and so checked: a write queued on D before D's first ordering after
//     F's unconfirmed work, and a stream ordered only after work a Sync of F confirmed
//     (that work did not fail).
// 10. A Sync reports the failures of the work on its device stream since its last
//     Sync: it may return an error where any work there may have failed since (an
//     output left errOK or mustErr, an injection consumed anywhere, a stream failed
//     by a fault), and must where a launch there was refused by the driver.

const modelSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void model_addc(const unsigned* x, unsigned* y, unsigned c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + c;
}
extern "C" __global__ void model_setc(unsigned* y, unsigned c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = c;
}
extern "C" __global__ void model_trap(unsigned* y, unsigned n) {}
extern "C" __global__ void model_spin(unsigned* out, unsigned long long n) {
    volatile unsigned long long k = 0;
    for (unsigned long long i = 0; i < n; i++) k = k + i;
    out[0] = (unsigned)k;
}
`

var (
	modelBlock = hipsys.Dim3{X: 64, Y: 1, Z: 1}
	modelAddC  = server.NewKernel(modelSource, "model_addc", modelBlock, []server.Access{server.Read, server.Write})
	modelSetC  = server.NewKernel(modelSource, "model_setc", modelBlock, []server.Access{server.Write})
	modelTrap  = server.NewKernel(modelSource, "model_trap", modelBlock, []server.Access{server.Write})
	modelSpin  = server.NewKernel(modelSource, "model_spin", hipsys.Dim3{X: 1, Y: 1, Z: 1}, []server.Access{server.Write})
)

// Kernel kinds of a launch, capture or replay.
const (
	kAddC = iota // y[i] = x[i] + c
	kSetC        // y[i] = c
	kTrap        // faults on the device, writes nothing
)

// modelTrapper makes every launch of the trap kernel fault on the device (the cpu
// platform's FailOnDevice): the launch call succeeds, and the device reports the fault at
// the waits past it. Each fault's detail is "model trap N".
type modelTrapper struct {
	hipsys.Platform
	dev   deviceFaulter
	fn    atomic.Uintptr // the trap kernel's loaded function; 0 none
	traps atomic.Int64
}

func (w *modelTrapper) Unwrap() hipsys.Platform { return w.Platform }

func (w *modelTrapper) ModuleLaunchKernel(f hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream, args *hipsys.KernelArgs) error {
	if err := w.Platform.ModuleLaunchKernel(f, grid, block, shmem, s, args); err != nil {
		return err
	}
	if fn := w.fn.Load(); fn != 0 && uintptr(f) == fn && w.dev != nil {
		n := w.traps.Add(1)
		return w.dev.FailOnDevice(s, fmt.Sprintf("model trap %d", n))
	}
	return nil
}

// modelOp is one step of a sequence; regression tests list them literally.
type modelOp struct {
	Kind  string // alloc write writeAt launch sync read readAt readSlice release capture replay destroy spin outside
	S     int    // logical stream id
	B, X  int    // buffers, by creation order (B the target, X a launch's input)
	Size  int    // alloc
	Off   int    // writeAt, readAt
	Len   int    // writeAt, readAt
	Seed  uint32 // data of a write, the constant of a kernel, the byte of an outside write, a spin's iterations (0: the default)
	K     int    // kernel kind
	G     int    // graph, by creation order
	Flag  bool   // outside: Sync first; readSlice: ReadSliceAt
	Fail  string // a HIP call to fail during the op ("" none)
	FailN int    // its call index from the op's start
}

func (o modelOp) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{Kind: %q, S: %d", o.Kind, o.S)
	for _, f := range []struct {
		name string
		v    int
	}{{"B", o.B}, {"X", o.X}, {"Size", o.Size}, {"Off", o.Off}, {"Len", o.Len}, {"Seed", int(o.Seed)}, {"K", o.K}, {"G", o.G}} {
		if f.v != 0 {
			fmt.Fprintf(&b, ", %s: %d", f.name, f.v)
		}
	}
	if o.Flag {
		b.WriteString(", Flag: true")
	}
	if o.Fail != "" {
		fmt.Fprintf(&b, ", Fail: %q, FailN: %d", o.Fail, o.FailN)
	}
	b.WriteString("},")
	return b.String()
}

// modelOpts are a sequence's Device options.
type modelOpts struct {
	MaxStreams int
	Direct     bool
	BigStaging bool // default staging (16 MiB chunks) and a 17 MiB size class; else 16 KiB × 2
}

// modelSizes are the size classes; the last is past the small-read limit and several
// staging chunks (or past one default chunk with BigStaging).
func modelSizes(o modelOpts) []int {
	if o.BigStaging {
		return []int{4, 1 << 10, 64 << 10, 17<<20 + 4}
	}
	return []int{4, 1 << 10, 64 << 10, 96<<10 + 4}
}

// modelFailures are the calls the model fails, with the status each fails with.
var modelFailures = []struct {
	name   string
	status hipsys.Status
}{
	{"hipModuleLaunchKernel", hipsys.ErrorLaunchFailure},
	{"hipMemcpyHtoDAsync", hipsys.ErrorInvalidValue},
	{"hipMemcpyDtoHAsync", hipsys.ErrorInvalidValue},
	{"hipMemcpyDtoH", hipsys.ErrorInvalidValue},
	{"hipEventSynchronize", hipsys.ErrorLaunchFailure},
	{"hipStreamSynchronize", hipsys.ErrorLaunchFailure},
	{"hipEventQuery", hipsys.ErrorLaunchFailure},
	{"hipStreamQuery", hipsys.ErrorLaunchFailure},
	{"hipEventRecord", hipsys.ErrorInvalidValue},
	{"hipStreamWaitEvent", hipsys.ErrorInvalidValue},
	{"hipGraphLaunch", hipsys.ErrorInvalidValue},
	{"hipMalloc", hipsys.ErrorOutOfMemory},
	{"hipHostMalloc", hipsys.ErrorOutOfMemory},
}

func modelFailStatus(name string) hipsys.Status {
	for _, f := range modelFailures {
		if f.name == name {
			return f.status
		}
	}
	return hipsys.ErrorInvalidValue
}

// isWaitCall: a failure of it is a failed wait, which leaves the unconfirmed writes of
// the waited stream carrying it.
func isWaitCall(name string) bool {
	return strings.Contains(name, "Synchronize") || strings.HasSuffix(name, "Query")
}

// mbuf is the model of one buffer.
type mbuf struct {
	name     string
	b        *server.Buffer
	size     int
	alts     [][]byte
	errOK    bool
	mustErr  bool
	pending  map[int]int  // device streams with a write of it no Sync confirmed: the time of the latest (model.tick)
	home     int          // the device stream it was allocated on (its pools')
	wroteOn  map[int]bool // every device stream that ever wrote it
	lastDev  int
	released bool
	// Outside work on device stream outsideDev wrote it; before is what it held
	// (readable from other device streams until a Sync of outsideDev).
	outsideDev int
	before     [][]byte
	// readers are the device streams with queued work that reads it and no Sync since:
	// a write on another device stream must be ordered after them by the client (the
	// server orders on last writes only), which the model does with a Sync first.
	readers map[int]bool
	// trapDev is the device stream of the trap whose output it is (mustErr), -1 none.
	trapDev int
}

type mgraph struct {
	g         *server.Graph
	kind      int
	x, y      *mbuf
	c         uint32
	s         int
	destroyed bool
}

// modelTB is what the model fails and logs through: *testing.T or *rapid.T.
type modelTB interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

type model struct {
	t      modelTB
	o      modelOpts
	d      *server.Device
	f      *faults.Platform
	trap   *modelTrapper
	raw    hipsys.Platform
	bufs   []*mbuf
	graphs []*mgraph
	// faults[D]: device faults queued on device stream D and not known reported.
	faults []int
	// unsynced[D]: since D's last Sync some work on D may have failed, so that Sync may
	// report it (rule 10); mustSync[D]: some certainly did (a launch the driver refused),
	// so that Sync must.
	unsynced, mustSync []bool
	order              modelOrder             // which device streams may be ordered after which (model_order_test.go)
	tick               int                    // the current op's number, for the times of orderings and writes
	scratch            map[int]*server.Buffer // the spin kernel's output, per id
	spinN              uint64
	ops                []string
	applied            []modelOp // the same ops, for the replay file a failure writes

	// The outside library's stream, events and slow scratch, made on first use.
	outside    hipsys.Stream
	outEvents  []hipsys.Event
	outScratch hipsys.DevicePtr

	stats *modelStats
}

// modelStats counts what the reads saw, over a whole run.
type modelStats struct {
	mu                   sync.Mutex
	seqs, ops            int
	right, errs, allowed int // reads with the right bytes, with an error; errors allowed only by a pending fault or injection
	injected             int
}

func (s *modelStats) add(f func(s *modelStats)) {
	s.mu.Lock()
	f(s)
	s.mu.Unlock()
}

const modelOutsideScratch = 4 << 20 // the outside library's slow memset before its write

// modelPlatform is the cpu platform the model runs over, or a reason to skip.
func modelPlatform(t testing.TB) (hipsys.Platform, deviceFaulter) {
	t.Helper()
	p, err := hipsys.Open("auto")
	if err != nil {
		t.Fatalf("open platform: %v", err)
	}
	// Only the cpu device faults work on the device and recovers (a GPU's fault ends
	// its context for good): elsewhere the model runs without its trap kernel, with
	// every other op, injected failures included.
	if dev, ok := p.(deviceFaulter); ok && p.Name() == "cpu" {
		return p, dev
	}
	return p, nil
}

// newModel opens a Device for one sequence.
func newModel(t modelTB, p hipsys.Platform, dev deviceFaulter, o modelOpts, stats *modelStats) *model {
	t.Helper()
	tr := &modelTrapper{Platform: p, dev: dev}
	f := faults.Wrap(tr)
	opts := server.Options{MaxStreams: o.MaxStreams, DirectLaunch: o.Direct, Logger: slog.New(slog.DiscardHandler)}
	if !o.BigStaging {
		opts.StagingChunk, opts.StagingDepth = 16<<10, 2
	}
	d, err := server.OpenPlatform(f, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	m := &model{t: t, o: o, d: d, f: f, trap: tr, raw: p, faults: make([]int, o.MaxStreams),
		unsynced: make([]bool, o.MaxStreams), mustSync: make([]bool, o.MaxStreams),
		scratch: map[int]*server.Buffer{}, spinN: 20000, stats: stats}
	for _, k := range []*server.Kernel{modelAddC, modelSetC, modelTrap, modelSpin} {
		if err := d.Compile(k); err != nil {
			t.Fatalf("compile %s: %v", k.Entry(), err)
		}
	}
	_, fn, _, err := server.LaunchTarget(d, modelTrap)
	if err != nil {
		t.Fatalf("trap kernel: %v", err)
	}
	tr.fn.Store(uintptr(fn))
	return m
}

// close closes the Device (after the sequence: a device fault may still be pending)
// and what the outside library made.
func (m *model) close() {
	m.t.Helper()
	pending := slices.ContainsFunc(m.faults, func(n int) bool { return n > 0 })
	m.f.Reset()
	if err := m.d.Close(); err != nil && !pending {
		m.fail("Close: %v (no device fault pending)", err)
	}
	if m.outside != 0 {
		_ = m.raw.StreamDestroy(m.outside)
		for _, e := range m.outEvents {
			_ = m.raw.EventDestroy(e)
		}
		_ = m.raw.Free(m.outScratch)
	}
}

func (m *model) dev(s int) int { return s % m.o.MaxStreams }

// faultElsewhere reports whether a device stream other than d has a fault pending.
func (m *model) faultElsewhere(d int) bool {
	for e, n := range m.faults {
		if e != d && n > 0 {
			return true
		}
	}
	return false
}

func (m *model) anyFault() bool {
	return slices.ContainsFunc(m.faults, func(n int) bool { return n > 0 })
}

// mayCarry reports whether b may carry a failure now (rule 2's buffer half).
func (m *model) mayCarry(b *mbuf) bool {
	if b.errOK || b.mustErr {
		return true
	}
	for d := range b.pending {
		if m.faults[d] > 0 {
			return true
		}
	}
	return false
}

// failStream: a failed wait on device stream d leaves its unconfirmed writes carrying
// the failure.
func (m *model) failStream(d int) {
	m.unsynced[d] = true
	for _, b := range m.bufs {
		if _, ok := b.pending[d]; ok {
			b.errOK = true
		}
	}
}

func (m *model) failAllStreams() {
	for d := range m.o.MaxStreams {
		m.failStream(d)
	}
}

// view is what b may hold as read from device stream d.
func (m *model) view(b *mbuf, d int) [][]byte {
	if b.alts == nil {
		return nil // unchecked: the bytes are not known, whatever came before them
	}
	if b.outsideDev >= 0 && b.outsideDev != d {
		return modelDedupe(append(slices.Clone(b.alts), b.before...))
	}
	return b.alts
}

func modelDedupe(alts [][]byte) [][]byte {
	var out [][]byte
	for _, a := range alts {
		if !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, a) }) {
			out = append(out, a)
		}
	}
	return out
}

// modelMaxAlts bounds the contents the model follows per buffer: past it (only after
// many failed calls on one buffer) the buffer's bytes are no longer checked.
const modelMaxAlts = 8

// wrote records work on device stream d that leaves b holding one of alts.
func (m *model) wrote(b *mbuf, d int, alts [][]byte, errOK, mustErr bool) {
	alts = modelDedupe(alts)
	if len(alts) > modelMaxAlts {
		alts = nil // unchecked
		errOK = true
	}
	b.alts, b.errOK, b.mustErr = alts, errOK || m.faults[d] > 0, mustErr
	if b.errOK || b.mustErr {
		m.unsynced[d] = true // the work that wrote it may have failed: d's Sync may say so
	}
	b.trapDev = -1
	if b.pending == nil {
		b.pending, b.wroteOn = map[int]int{}, map[int]bool{}
	}
	b.pending[d] = m.writeTime()
	b.wroteOn[d] = true
	b.lastDev = d
	if b.outsideDev >= 0 && b.outsideDev != d {
		m.fail("model: %s written on device stream %d while outside work on %d races it", b.name, d, b.outsideDev)
	}
}

func modelPattern(n int, seed uint32) []byte {
	out := make([]byte, (n+7)&^7)
	x := uint64(seed)*0x9E3779B97F4A7C15 + 1
	for i := 0; i < len(out); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(out[i:], x)
	}
	return out[:n]
}

func modelWords(b []byte) int { return len(b) / 4 }

// compute is what kernel kind leaves in y (old contents) from x (contents) and c.
func modelCompute(kind int, x, y []byte, c uint32) []byte {
	out := slices.Clone(y)
	switch kind {
	case kAddC:
		n := min(modelWords(x), modelWords(y))
		for i := range n {
			binary.LittleEndian.PutUint32(out[4*i:], binary.LittleEndian.Uint32(x[4*i:])+c)
		}
	case kSetC:
		for i := range modelWords(y) {
			binary.LittleEndian.PutUint32(out[4*i:], c)
		}
	}
	return out
}

// launchAlts is what kind leaves in y from every content x may hold (as seen from d).
func (m *model) launchAlts(kind int, x, y *mbuf, c uint32, d int) [][]byte {
	if kind == kTrap {
		return y.alts
	}
	if y.alts == nil || (kind == kAddC && x.alts == nil) {
		return nil
	}
	var out [][]byte
	for _, ya := range m.view(y, d) {
		if kind == kSetC {
			out = append(out, modelCompute(kind, nil, ya, c))
			continue
		}
		for _, xa := range m.view(x, d) {
			out = append(out, modelCompute(kind, xa, ya, c))
		}
	}
	return out
}

// armed is an injected failure of one op.
type armed struct {
	name     string
	n        int
	before   int
	consumed bool
}

func (m *model) arm(op modelOp) *armed {
	if op.Fail == "" {
		return nil
	}
	a := &armed{name: op.Fail, n: max(op.FailN, 1), before: m.f.Calls(op.Fail)}
	if !m.f.FailNth(op.Fail, a.n, modelFailStatus(op.Fail)) {
		m.t.Fatalf("model: cannot arm %s", op.Fail)
	}
	return a
}

// disarm ends the op's injection and says whether it failed a call. Reset first, so a
// call of a background worker after the op is counted (as consumed: the lenient side).
func (m *model) disarm(a *armed) {
	if a == nil {
		return
	}
	m.f.Reset()
	a.consumed = m.f.Calls(a.name)-a.before >= a.n
	if a.consumed {
		m.stats.add(func(s *modelStats) { s.injected++ })
		if isWaitCall(a.name) {
			m.failAllStreams()
		}
		// An injected failure may fail work on any stream (a cross-stream wait, a
		// staging chunk's): any Sync may report it.
		for d := range m.unsynced {
			m.unsynced[d] = true
		}
	}
}

func (a *armed) hit() bool             { return a != nil && a.consumed }
func (a *armed) hitCall(n string) bool { return a.hit() && a.name == n }

func (m *model) fail(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("%s\nopts: %#v\nops so far:\n%s%s", fmt.Sprintf(format, args...), m.o, strings.Join(m.ops, "\n"), m.replayFile())
}

// replayFile writes the sequence so far as TestModelOps reads it, and says how to
// replay it: a failure CI drew is then run again as it was, on any machine, and
// shrunk by hand into a regression (model_regress_test.go).
func (m *model) replayFile() string {
	raw, err := json.Marshal(struct {
		Opts modelOpts
		Ops  []modelOp
	}{m.o, m.applied})
	if err != nil {
		return ""
	}
	// One file per process, overwritten: rapid fails every sequence it shrinks through
	// and replays the smallest last, so the file ends holding that one.
	name := filepath.Join(os.TempDir(), fmt.Sprintf("cubehip-model-%d.json", os.Getpid()))
	if err := os.WriteFile(name, raw, 0o600); err != nil {
		return ""
	}
	return fmt.Sprintf("\nreplay: CUBEHIP_MODEL_OPS=%s go test -run 'TestModelOps$' ./modules/server", name)
}

// live is buffer i if it exists and is not released.
func (m *model) live(i int) *mbuf {
	if i < 0 || i >= len(m.bufs) || m.bufs[i].released {
		return nil
	}
	return m.bufs[i]
}

// apply runs op on the Device and checks it against the model.
func (m *model) apply(op modelOp) {
	m.t.Helper()
	// Work on a buffer that outside work wrote on another device stream runs on that
	// device stream until a Sync there (the outside write is ordered only there).
	switch op.Kind {
	case "write", "writeAt", "launch", "capture":
		for at, i := range []int{op.B, op.X} {
			if b := m.live(i); b != nil && b.outsideDev >= 0 && m.dev(op.S) != b.outsideDev {
				// Only a launch of addc reads its x (at 1); a capture keeps its stream.
				if op.Kind == "capture" || (at == 1 && (op.Kind != "launch" || op.K != kAddC)) {
					continue
				}
				op.S = b.outsideDev + m.o.MaxStreams*(op.S/m.o.MaxStreams)
			}
		}
	}
	var written *mbuf
	wd := m.dev(op.S)
	switch op.Kind {
	case "write", "writeAt", "launch", "capture":
		written = m.live(op.B)
	case "replay":
		if op.G < len(m.graphs) && !m.graphs[op.G].destroyed {
			written, wd = m.graphs[op.G].y, m.dev(m.graphs[op.G].s)
		}
	}
	if written != nil {
		for r := range written.readers {
			if r != wd {
				m.apply(modelOp{Kind: "sync", S: r}) // the client orders a write after other streams' reads
			}
		}
	}
	m.ops = append(m.ops, "\t"+op.String())
	m.applied = append(m.applied, op)
	m.stats.add(func(s *modelStats) { s.ops++ })
	s := m.d.On(server.StreamID(op.S))
	d := m.dev(op.S)
	if op.Kind == "replay" {
		// A graph replays on the stream it was captured on, whatever id the op drew: the
		// orderings it makes and the faults it inherits are that device stream's.
		d = wd
	}
	m.tick++
	m.failFaulted() // any call may wait past a pending fault (rule 9)
	m.ordered(op, d)
	if op.Kind != "sync" && op.Kind != "release" && m.faultElsewhere(d) {
		// The op may order device stream d after work on a stream with a fault pending
		// (a cross-stream wait for a buffer's last write), and work ordered after failed
		// work fails with it, on a GPU and on the cpu device alike: d then has a fault
		// pending too, until a Sync of d reports it, and its unconfirmed writes may carry
		// it.
		defer func() {
			m.faults[d]++
			m.failStream(d)
		}()
	}
	switch op.Kind {
	case "alloc":
		a := m.arm(op)
		b, err := s.Alloc(uint64(op.Size))
		var werr error
		data := modelPattern(op.Size, op.Seed)
		if err == nil {
			werr = s.Write(b, data)
		}
		m.disarm(a)
		if err != nil {
			if !a.hit() {
				m.fail("alloc of %d bytes on %d: %v (nothing injected)", op.Size, op.S, err)
			}
			// Nothing was made; the model's buffer index stays free for the next alloc.
			return
		}
		mb := &mbuf{name: fmt.Sprintf("b%d", len(m.bufs)), b: b, size: op.Size, outsideDev: -1, trapDev: -1, home: d}
		m.bufs = append(m.bufs, mb)
		m.afterWrite(mb, d, nil, data, 0, werr, a, true)
	case "write", "writeAt":
		b := m.live(op.B)
		if b == nil {
			return
		}
		data := modelPattern(b.size, op.Seed)
		off := 0
		if op.Kind == "writeAt" {
			off, data = op.Off%b.size, modelPattern(op.Len, op.Seed)
			data = data[:min(len(data), b.size-off)]
		}
		a := m.arm(op)
		var err error
		if op.Kind == "write" {
			err = s.Write(b.b, data)
		} else {
			err = s.WriteAt(b.b, uint64(off), data)
		}
		m.disarm(a)
		m.afterWrite(b, d, b.alts, data, off, err, a, off == 0 && len(data) == b.size)
	case "launch":
		y := m.live(op.B)
		x := m.live(op.X)
		if y == nil || (op.K == kAddC && (x == nil || x == y)) {
			return
		}
		if (y.outsideDev >= 0 && y.outsideDev != d) || (op.K == kAddC && x.outsideDev >= 0 && x.outsideDev != d) {
			return // outside writes on both device streams
		}
		a := m.arm(op)
		traps := m.trap.traps.Load()
		err := m.call(s, op.K, x, y, op.Seed)
		m.disarm(a)
		trapped := m.trap.traps.Load() > traps
		if err != nil && !a.hit() {
			m.fail("launch on %d returned %v (nothing injected)", op.S, err)
		}
		m.afterLaunch(op.K, x, y, op.Seed, d, err, a, trapped)
		if a.hitCall("hipModuleLaunchKernel") {
			m.mustSync[d] = true // the driver refused the launch: d's next Sync reports it
		}
	case "sync":
		a := m.arm(op)
		err := s.Sync()
		m.disarm(a)
		m.afterSync(d, err, a)
	case "read", "readAt", "readSlice":
		b := m.live(op.B)
		if b == nil {
			return
		}
		off, n := 0, b.size
		if op.Kind == "readAt" || (op.Kind == "readSlice" && op.Flag) {
			off = op.Off % b.size
			n = max(1, min(op.Len, b.size-off))
		}
		if op.Kind == "readSlice" {
			off, n = off&^3, n&^3
			if n == 0 {
				n = 4
			}
			n = min(n, b.size-off)
		}
		a := m.arm(op)
		got, err := m.read(s, op, b, off, n)
		m.disarm(a)
		m.judgeRead(b, d, off, got, err, a, op)
	case "release":
		b := m.live(op.B)
		if b == nil || b.outsideDev >= 0 {
			return
		}
		if err := b.b.Release(); err != nil {
			m.fail("release %s: %v", b.name, err)
		}
		b.released = true
	case "capture":
		y := m.live(op.B)
		x := m.live(op.X)
		if y == nil || (op.K == kAddC && (x == nil || x == y)) {
			return
		}
		if (y.outsideDev >= 0 && y.outsideDev != d) || (x != nil && op.K == kAddC && x.outsideDev >= 0 && x.outsideDev != d) {
			return
		}
		a := m.arm(op)
		traps := m.trap.traps.Load()
		g, err := s.Capture(func(cs server.Stream) error { return m.call(cs, op.K, x, y, op.Seed) })
		m.disarm(a)
		trapped := m.trap.traps.Load() > traps
		if err != nil && !a.hit() && !m.anyFault() && !trapped && !(x != nil && m.mayCarry(x)) && !m.mayCarry(y) {
			m.fail("capture on %d: %v (nothing injected, no fault pending, inputs clean)", op.S, err)
		}
		m.afterLaunch(op.K, x, y, op.Seed, d, err, a, trapped)
		if err == nil {
			m.graphs = append(m.graphs, &mgraph{g: g, kind: op.K, x: x, y: y, c: op.Seed, s: op.S})
		}
	case "replay":
		if op.G >= len(m.graphs) || m.graphs[op.G].destroyed {
			return
		}
		g := m.graphs[op.G]
		gd := m.dev(g.s)
		if (g.y.outsideDev >= 0 && g.y.outsideDev != gd) || (g.kind == kAddC && g.x.outsideDev >= 0 && g.x.outsideDev != gd) {
			return
		}
		a := m.arm(op)
		err := g.g.Replay()
		m.disarm(a)
		if err != nil && !a.hit() && !m.anyFault() && !(g.kind == kAddC && m.mayCarry(g.x)) {
			m.fail("replay of graph %d: %v (nothing injected, no fault pending, input clean)", op.G, err)
		}
		m.afterLaunch(g.kind, g.x, g.y, g.c, gd, err, a, g.kind == kTrap && err == nil)
	case "destroy":
		if op.G >= len(m.graphs) || m.graphs[op.G].destroyed {
			return
		}
		g := m.graphs[op.G]
		gd := m.dev(g.s)
		a := m.arm(op)
		err := g.g.Destroy()
		m.disarm(a)
		g.destroyed = true
		if err != nil {
			if !a.hit() && m.faults[gd] == 0 {
				m.fail("destroy of graph %d: %v (nothing injected, no fault pending)", op.G, err)
			}
			g.y.errOK = true
			m.failAllStreams()
		}
	case "spin":
		out := m.scratch[op.S]
		if out == nil {
			var err error
			if out, err = s.Alloc(4); err != nil {
				m.fail("alloc scratch: %v", err)
			}
			m.scratch[op.S] = out
		}
		n := m.spinN
		if op.Seed != 0 {
			n = uint64(op.Seed) // a regression's long spin: a window no scheduling closes
		}
		a := m.arm(op)
		err := s.Call(modelSpin, hipsys.Dim3{X: 1, Y: 1, Z: 1}, out.Arg(), server.U64(n))
		m.disarm(a)
		if err != nil && !a.hit() {
			m.fail("spin on %d: %v", op.S, err)
		}
	case "outside":
		m.outsideWrite(op)
	default:
		m.fail("model: unknown op %q", op.Kind)
	}
}

// call launches kind on s.
func (m *model) call(s server.Stream, kind int, x, y *mbuf, c uint32) error {
	n := uint32(modelWords(make([]byte, y.size)))
	switch kind {
	case kAddC:
		n = uint32(min(x.size, y.size) / 4)
		return s.Call(modelAddC, grid(int(n)), x.b.Arg(), y.b.Arg(), server.U32(c), server.U32(n))
	case kSetC:
		return s.Call(modelSetC, grid(int(n)), y.b.Arg(), server.U32(c), server.U32(n))
	default:
		return s.Call(modelTrap, grid(int(n)), y.b.Arg(), server.U32(n))
	}
}

// afterWrite applies a write of data at off into b (old: what it held; nil for a fresh
// buffer) on device stream d, whose call returned err.
func (m *model) afterWrite(b *mbuf, d int, old [][]byte, data []byte, off int, err error, a *armed, whole bool) {
	m.t.Helper()
	var next [][]byte
	base := old
	if base == nil && whole {
		base = [][]byte{make([]byte, b.size)}
	}
	for _, o := range base {
		n := slices.Clone(o)
		copy(n[off:], data)
		next = append(next, n)
	}
	if base == nil {
		next = nil // part of a never-known buffer: unchecked
	}
	if err != nil {
		if !a.hit() && !m.anyFault() && !m.mayCarry(b) {
			m.fail("write of %d bytes at %d into %s on %d: %v (nothing injected, no fault pending, %s carried nothing)", len(data), off, b.name, d, err, b.name)
		}
		alts := next
		if old != nil {
			alts = append(slices.Clone(old), next...)
		} else {
			alts = nil
		}
		chunk := 16 << 10
		if m.o.BigStaging {
			chunk = 16 << 20
		}
		if len(data) > chunk {
			// Copied in pieces, of which some may have landed: the memory holds a mix.
			// The failure it carries hides it from reads, but a later launch that only
			// partly writes it (the server takes a launch to write its whole output)
			// leaves the mix visible: those bytes are not followed.
			alts = nil
		}
		m.wrote(b, d, alts, true, false)
		return
	}
	// A partial write of a buffer that may carry a failure leaves the rest of its bytes
	// as unknown as before: the failure must stay (a certain one stays certain).
	carried := !whole && (b.errOK || b.mustErr)
	must := !whole && b.mustErr
	m.wrote(b, d, next, a.hit() || carried, must)
}

// afterLaunch applies a launch (or capture warm-up, or replay) of kind from x into y on
// device stream d whose call returned err.
func (m *model) afterLaunch(kind int, x, y *mbuf, c uint32, d int, err error, a *armed, trapped bool) {
	m.t.Helper()
	newAlts := m.launchAlts(kind, x, y, c, d)
	inErr, inMust := false, false
	if kind == kAddC {
		inErr, inMust = m.mayCarry(x), x.mustErr
		if x.readers == nil {
			x.readers = map[int]bool{}
		}
		x.readers[d] = true
	}
	if trapped {
		m.failStream(d)
		m.faults[d]++
	}
	switch {
	case err != nil:
		m.wrote(y, d, append(slices.Clone(y.alts), newAlts...), true, false)
	case kind == kTrap || a.hitCall("hipModuleLaunchKernel"):
		// The trap writes nothing; a refused launch ran nothing: the old bytes stay in
		// memory (for what a cross-stream reader may compute), and every read errs.
		m.wrote(y, d, y.alts, true, true)
		if kind == kTrap && trapped {
			y.trapDev = d
		}
	default:
		alts := newAlts
		if (inErr || a.hit()) && newAlts != nil { // nil: unchecked either way
			// An input that may carry a failure may have stopped the launch, and so may
			// an injected failure of a call before the kernel's (a cross-stream wait the
			// driver refused, the info upload): Launch returns nil, the output keeps its
			// old bytes (carrying the failure), and a later launch that writes it
			// recovers it, old bytes and all, since the server takes a launch to write
			// its whole output.
			alts = append(slices.Clone(y.alts), newAlts...)
		}
		m.wrote(y, d, alts, inErr || a.hit(), inMust)
		if inMust && x.trapDev >= 0 {
			y.trapDev = x.trapDev // computed from what a fault not yet reported left
		}
	}
}

func (m *model) afterSync(d int, err error, a *armed) {
	m.t.Helper()
	may, must := m.unsynced[d], m.mustSync[d]
	m.unsynced[d], m.mustSync[d] = false, false
	if err == nil && must {
		m.fail("sync of device stream %d returned nil after a launch there failed since its last sync", d)
	}
	if err == nil || !a.hit() {
		for _, b := range m.bufs {
			delete(b.readers, d) // the stream was waited for
		}
	}
	if err == nil {
		m.synced(d)
		for _, b := range m.bufs {
			delete(b.pending, d)
			if b.outsideDev == d {
				b.outsideDev, b.before = -1, nil
			}
		}
		m.faults[d] = 0
		return
	}
	if !a.hit() && m.faults[d] == 0 && !may {
		m.fail("sync of device stream %d: %v (nothing injected, no fault pending there, no work there failed since its last sync)", d, err)
	}
	// The server fails the unconfirmed writes of the streams ordered after d's work
	// too (compute/confirm.go, failOrdered); the model does not track which streams
	// waited on which, so any stream's may carry it.
	m.failAllStreams()
	if strings.Contains(err.Error(), "model trap") && m.faults[d] > 0 {
		m.faults[d]--
	}
}

// read reads n bytes at off of b on s, the way op says.
func (m *model) read(s server.Stream, op modelOp, b *mbuf, off, n int) ([]byte, error) {
	switch {
	case op.Kind == "read":
		return s.Read(b.b)
	case op.Kind == "readAt":
		dst := make([]byte, n)
		return dst, s.ReadAt(dst, b.b, uint64(off))
	case op.Flag: // readSlice at
		dst := make([]uint32, n/4)
		err := server.ReadSliceAt(s, dst, b.b, uint64(off/4))
		return modelU32bytes(dst), err
	default:
		v, err := server.ReadSlice[uint32](s, b.b)
		return modelU32bytes(v), err
	}
}

func modelU32bytes(v []uint32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], x)
	}
	return out
}

// judgeRead is the oracle for one read of b from device stream d.
func (m *model) judgeRead(b *mbuf, d, off int, got []byte, err error, a *armed, op modelOp) {
	m.t.Helper()
	if err != nil {
		carried := m.mayCarry(b)
		if m.anyFault() {
			// The read's wait may have met the fault (a staging wait reports it and
			// acknowledges it, so the Sync after it succeeds): like a failed Sync, it
			// fails every stream that may have been ordered after the faulted work,
			// even when the buffer read carried a failure of its own.
			m.failAllStreams()
		}
		if carried {
			m.stats.add(func(s *modelStats) { s.errs++ })
			return
		}
		if a.hit() || m.anyFault() {
			m.stats.add(func(s *modelStats) { s.errs++; s.allowed++ })
			return
		}
		m.fail("%s of %s (%d bytes at %d) on %d: %v, but nothing failed that wrote it (spurious error)", op.Kind, b.name, len(got), off, op.S, err)
	}
	if b.mustErr {
		m.fail("%s of %s on %d returned bytes (nil error), but the work that last wrote it failed: %s", op.Kind, b.name, op.S, modelDescribe(got, b.alts, off))
	}
	alts := m.view(b, d)
	if alts == nil {
		return // unchecked
	}
	for _, want := range alts {
		if bytes.Equal(got, want[off:off+len(got)]) {
			m.stats.add(func(s *modelStats) { s.right++ })
			return
		}
	}
	m.fail("%s of %s (%d bytes at %d) on %d returned bytes nothing wrote: %s", op.Kind, b.name, len(got), off, op.S, modelDescribe(got, alts, off))
}

// describe says where got differs from the first alternative.
func modelDescribe(got []byte, alts [][]byte, off int) string {
	if len(alts) == 0 {
		return fmt.Sprintf("got % x...", got[:min(16, len(got))])
	}
	want := alts[0][off : off+len(got)]
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at byte %d: got % x, want % x (%d alternatives)", off+i, got[i:min(i+8, len(got))], want[i:min(i+8, len(want))], len(alts))
		}
	}
	return "equal to the first alternative"
}

// outsideWrite is another library writing b on a stream of its own (after a slow
// memset) and ordering the Device's native stream after it with an event, then a read
// of b on the Device's stream.
func (m *model) outsideWrite(op modelOp) {
	m.t.Helper()
	b := m.live(op.B)
	if b == nil || b.mustErr || b.alts == nil {
		return
	}
	// On the device stream of its last write, so the outside write follows it.
	s := m.d.On(server.StreamID(b.lastDev + m.o.MaxStreams*(op.S/m.o.MaxStreams)))
	d := b.lastDev
	if op.Flag {
		err := s.Sync()
		m.afterSync(d, err, nil)
	}
	m.orderedBy(b, b.home) // DevicePointer orders the buffer's own stream after its last write
	ptr, err := b.b.DevicePointer()
	if err != nil {
		if !m.mayCarry(b) && !m.anyFault() {
			m.fail("DevicePointer of %s: %v (it carries nothing)", b.name, err)
		}
		return
	}
	p := m.raw
	if m.outside == 0 {
		if m.outside, err = p.StreamCreateWithFlags(hipsys.StreamNonBlocking); err != nil {
			m.fail("outside stream: %v", err)
		}
		for range m.o.MaxStreams + 1 {
			e, err := p.EventCreateWithFlags(0)
			if err != nil {
				m.fail("outside event: %v", err)
			}
			m.outEvents = append(m.outEvents, e)
		}
		if m.outScratch, err = p.Malloc(modelOutsideScratch); err != nil {
			m.fail("outside scratch: %v", err)
		}
	}
	// The outside library hears of its own stream's failures (one it inherited by
	// waiting on a Device stream with a fault pending, at an earlier outside op) at its
	// own synchronization, as any library does; it starts clean.
	_ = p.StreamSynchronize(m.outside)
	// The outside stream waits for everything the Device queued (no hazard with the
	// Device's own readers of b), runs long, writes b, and the Device's stream waits.
	for i := range m.o.MaxStreams {
		h, err := m.d.On(server.StreamID(i)).NativeHandle()
		if err != nil {
			m.fail("native handle: %v", err)
		}
		modelMust(m, p.EventRecord(m.outEvents[i], hipsys.Stream(h)))
		modelMust(m, p.StreamWaitEvent(m.outside, m.outEvents[i], 0))
	}
	native, err := s.NativeHandle()
	if err != nil {
		m.fail("native handle: %v", err)
	}
	v := byte(op.Seed)
	modelMust(m, p.MemsetAsync(m.outScratch, 0, modelOutsideScratch, m.outside))
	modelMust(m, p.MemsetAsync(ptr, v, uint64(b.size), m.outside))
	last := m.outEvents[m.o.MaxStreams]
	modelMust(m, p.EventRecord(last, m.outside))
	modelMust(m, p.StreamWaitEvent(hipsys.Stream(native), last, 0))

	b.before = modelDedupe(append(b.before, b.alts...))
	b.alts = [][]byte{bytes.Repeat([]byte{v}, b.size)}
	b.outsideDev = d
	// The read right after, on the same device stream: ordered after the outside write.
	m.orderedBy(b, d)
	n := min(b.size, max(4, op.Len))
	dst := make([]byte, n)
	rerr := s.ReadAt(dst, b.b, 0)
	m.judgeRead(b, d, 0, dst, rerr, nil, modelOp{Kind: "outside read", S: int(s.ID())})
}

func modelMust(m *model, err error) {
	m.t.Helper()
	if err != nil {
		m.fail("outside call: %v", err)
	}
}

// trapKind is the kernel kind drawn for a trap: the trap itself where the platform can
// fault work and recover, else a plain set.
func (m *model) trapKind() int {
	if m.trap.dev == nil {
		return kSetC
	}
	return kTrap
}

// drawOp draws the next op for the model's state.
func drawOp(t *rapid.T, m *model) modelOp {
	ids := 4
	op := modelOp{S: rapid.IntRange(0, ids-1).Draw(t, "s")}
	liveBuf := func(label string) int {
		var live []int
		for i, b := range m.bufs {
			if !b.released {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			return -1
		}
		return rapid.SampledFrom(live).Draw(t, label)
	}
	sizes := modelSizes(m.o)
	kind := rapid.IntRange(0, 99).Draw(t, "kind")
	if len(m.bufs) < 2 {
		kind = 0
	}
	switch {
	case kind < 12:
		op.Kind = "alloc"
		class := rapid.IntRange(0, 15).Draw(t, "size")
		op.Size = sizes[min(class%4, 2)]
		if class == 15 {
			op.Size = sizes[3] // the big class, rarely
		}
		op.Seed = rapid.Uint32().Draw(t, "seed")
	case kind < 24:
		op.Kind = "write"
		if rapid.Bool().Draw(t, "at") {
			op.Kind = "writeAt"
			op.Off = rapid.IntRange(0, 1<<17).Draw(t, "off")
			op.Len = rapid.IntRange(1, 1<<17).Draw(t, "len")
		}
		op.B = liveBuf("b")
		op.Seed = rapid.Uint32().Draw(t, "seed")
	case kind < 44:
		op.Kind = "launch"
		op.K = rapid.IntRange(0, 7).Draw(t, "k")
		op.K = []int{kAddC, kAddC, kAddC, kSetC, kSetC, kAddC, kSetC, m.trapKind()}[op.K]
		op.B = liveBuf("y")
		op.X = liveBuf("x")
		op.Seed = rapid.Uint32Range(0, 1000).Draw(t, "c")
	case kind < 54:
		op.Kind = "sync"
	case kind < 74:
		op.Kind = rapid.SampledFrom([]string{"read", "readAt", "readSlice"}).Draw(t, "read")
		op.B = liveBuf("b")
		op.Off = rapid.IntRange(0, 1<<17).Draw(t, "off")
		op.Len = rapid.IntRange(1, 1<<17).Draw(t, "len")
		op.Flag = rapid.Bool().Draw(t, "at")
	case kind < 78:
		op.Kind = "release"
		op.B = liveBuf("b")
	case kind < 83:
		op.Kind = "capture"
		op.K = []int{kAddC, kSetC, kAddC, m.trapKind()}[rapid.IntRange(0, 3).Draw(t, "k")]
		op.B = liveBuf("y")
		op.X = liveBuf("x")
		op.Seed = rapid.Uint32Range(0, 1000).Draw(t, "c")
	case kind < 90:
		op.Kind = "replay"
		op.G = rapid.IntRange(0, max(0, len(m.graphs)-1)).Draw(t, "g")
	case kind < 92:
		op.Kind = "destroy"
		op.G = rapid.IntRange(0, max(0, len(m.graphs)-1)).Draw(t, "g")
	case kind < 96:
		op.Kind = "spin"
	default:
		op.Kind = "outside"
		op.B = liveBuf("b")
		op.Seed = rapid.Uint32Range(1, 255).Draw(t, "v")
		op.Len = rapid.SampledFrom([]int{4, 1024, 64 << 10, 1 << 20}).Draw(t, "len")
		op.Flag = rapid.Bool().Draw(t, "sync first")
	}
	if rapid.IntRange(0, 9).Draw(t, "inject") == 9 && op.Kind != "release" && op.Kind != "outside" {
		op.Fail = modelFailures[rapid.IntRange(0, len(modelFailures)-1).Draw(t, "fail")].name
		op.FailN = rapid.IntRange(1, 3).Draw(t, "failN")
	}
	return op
}

// modelChecks is the default number of sequences: thousands on a plain run, fewer
// under the race detector or -short, so that CI's `go test -race` stays well within its
// budget. -rapid.checks overrides it.
func modelChecks() int {
	switch {
	case raceEnabled && testing.Short():
		return 50
	case raceEnabled:
		return 150
	case testing.Short():
		return 300
	}
	return 1500
}

// checksGiven reports whether -rapid.checks was on the command line. Looked at once,
// before withChecks first sets it: flag.Visit counts a flag set by withChecks too, and
// under -count=2 the second run would take its reset for the user's choice (rapid's
// default of 100 checks).
var checksGiven = sync.OnceValue(func() bool {
	given := false
	flag.Visit(func(fl *flag.Flag) { given = given || fl.Name == "rapid.checks" })
	return given
})

// withChecks runs f with rapid's check count set to n unless -rapid.checks was given.
func withChecks(n int, f func()) {
	if checksGiven() || flag.Lookup("rapid.checks") == nil {
		f()
		return
	}
	old := flag.Lookup("rapid.checks").Value.String()
	_ = flag.Set("rapid.checks", strconv.Itoa(n))
	defer flag.Set("rapid.checks", old)
	f()
}

// TestModel runs random sequences of Device calls against the reference model (see
// the oracle's rules at the top of this file).
func TestModel(t *testing.T) {
	p, dev := modelPlatform(t)
	stats := &modelStats{}
	start := time.Now()
	withChecks(modelChecks(), func() {
		rapid.Check(t, func(rt *rapid.T) {
			o := modelOpts{
				MaxStreams: rapid.IntRange(1, 2).Draw(rt, "maxStreams"),
				Direct:     rapid.Bool().Draw(rt, "direct"),
				BigStaging: rapid.IntRange(0, 19).Draw(rt, "bigStaging") == 0,
			}
			m := newModel(rt, p, dev, o, stats)
			defer m.close()
			rt.Logf("opts: %+v", o)
			steps := rapid.IntRange(1, 40).Draw(rt, "steps")
			for range steps {
				m.apply(drawOp(rt, m))
			}
			// Everything still readable, read once more at the end.
			for i, b := range m.bufs {
				if !b.released {
					m.apply(modelOp{Kind: "read", S: i % 4, B: i})
				}
			}
			stats.add(func(s *modelStats) { s.seqs++ })
		})
	})
	t.Logf("%d sequences, %d ops in %v: %d reads right, %d errors (%d allowed only by a pending fault or an injection), %d injected failures consumed",
		stats.seqs, stats.ops, time.Since(start).Round(time.Millisecond), stats.right, stats.errs, stats.allowed, stats.injected)
}

// runModelOps replays a fixed op list (a regression) and reports the first broken rule.
func runModelOps(t *testing.T, o modelOpts, ops []modelOp) {
	t.Helper()
	p, dev := modelPlatform(t)
	if dev == nil && slices.ContainsFunc(ops, func(op modelOp) bool {
		return (op.Kind == "launch" || op.Kind == "capture") && op.K == kTrap
	}) {
		t.Skipf("the sequence faults work on the device, which only the cpu device recovers from (platform %s)", p.Name())
	}
	m := newModel(t, p, dev, o, &modelStats{})
	defer m.close()
	for _, op := range ops {
		m.apply(op)
	}
}

// TestModelOps replays the op list in the JSON file $CUBEHIP_MODEL_OPS
// ({"Opts": {...}, "Ops": [{...}, ...], "Reps": n}): the tool for minimizing a
// counterexample by hand. Skipped without it.
func TestModelOps(t *testing.T) {
	path := os.Getenv("CUBEHIP_MODEL_OPS")
	if path == "" {
		t.Skip("CUBEHIP_MODEL_OPS names no op list")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Opts modelOpts
		Ops  []modelOp
		Reps int
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	for range max(in.Reps, 1) {
		runModelOps(t, in.Opts, in.Ops)
	}
}
