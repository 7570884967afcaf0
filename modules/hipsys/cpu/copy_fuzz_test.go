package cpu

import (
	"bytes"
	"errors"
	"math/big"
	"testing"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The copy fuzz targets drive hipsys's copy and memset calls on the cpu platform with
// arbitrary sizes, offsets, pitches and extents, against a model that knows where every
// allocation is. For every input: no crash, no hang; every call returns nil or a
// *hipsys.Error; a nil return means the bytes the model predicts really moved and
// nothing else changed; an error means nothing changed at all; and a copy the model
// says is valid is not refused. The seed corpus (testdata/fuzz) holds the copies that
// once wrote into a neighbouring allocation, crashed or hung, and go test runs it as
// ordinary tests.

// fuzzBuf is one allocation of the fuzz fixture.
type fuzzBuf struct {
	host bool
	addr uintptr
	size int
}

// copyFixture is a platform with a few device and pinned allocations, two of them
// small (a 64-byte target for huge copies), and a stream for the async forms.
type copyFixture struct {
	p      *Platform
	bufs   []fuzzBuf
	stream hipsys.Stream
}

func newCopyFixture(t testing.TB) *copyFixture {
	p := newTest(t)
	fx := &copyFixture{p: p}
	for _, b := range []struct {
		host bool
		size int
	}{{false, 4096}, {false, 4096}, {false, 64}, {true, 4096}, {true, 64}} {
		var addr uintptr
		if b.host {
			h, err := p.HostMalloc(uint64(b.size), 0)
			if err != nil {
				t.Fatal(err)
			}
			addr = uintptr(h)
			t.Cleanup(func() { _ = p.HostFree(h) })
		} else {
			d, err := p.Malloc(uint64(b.size))
			if err != nil {
				t.Fatal(err)
			}
			addr = uintptr(d)
			t.Cleanup(func() { _ = p.Free(d) })
		}
		fx.bufs = append(fx.bufs, fuzzBuf{host: b.host, addr: addr, size: b.size})
	}
	s, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.StreamDestroy(s) })
	fx.stream = s
	return fx
}

// addr is buffer sel's base plus off (wrapping as uintptr arithmetic does), or, for a
// sel past the buffers, off itself: a wild pointer.
func (fx *copyFixture) addr(sel uint8, off uint64) uintptr {
	if int(sel) >= len(fx.bufs) {
		return uintptr(off)
	}
	return fx.bufs[sel].addr + uintptr(off)
}

// mem views buffer i's bytes.
func (fx *copyFixture) mem(i int) []byte { return bytesAt(fx.bufs[i].addr, uint64(fx.bufs[i].size)) }

// reset fills every buffer with its own pattern and returns the model's copy of them.
func (fx *copyFixture) reset() [][]byte {
	model := make([][]byte, len(fx.bufs))
	for i := range fx.bufs {
		m := fx.mem(i)
		for j := range m {
			m[j] = byte(j*7 + i*31 + 1)
		}
		model[i] = bytes.Clone(m)
	}
	return model
}

// locate is the buffer holding [addr, addr+span) whole, and the offset in it; -1 when
// no buffer does. span is a big.Int so that the model never wraps.
func (fx *copyFixture) locate(addr uintptr, span *big.Int) (int, int) {
	for i, b := range fx.bufs {
		if addr < b.addr || addr >= b.addr+uintptr(b.size) {
			continue
		}
		off := int(addr - b.addr)
		if span.Cmp(big.NewInt(int64(b.size-off))) > 0 {
			return -1, 0
		}
		return i, off
	}
	return -1, 0
}

// check compares the fixture with the model: every byte of every buffer.
func (fx *copyFixture) check(t *testing.T, model [][]byte, what string) {
	t.Helper()
	for i := range fx.bufs {
		if got := fx.mem(i); !bytes.Equal(got, model[i]) {
			j := 0
			for j < len(got) && got[j] == model[i][j] {
				j++
			}
			t.Fatalf("%s: buffer %d differs from the model at byte %d (got %#x, want %#x)", what, i, j, got[j], model[i][j])
		}
	}
}

// hipError fails the test unless err is an *hipsys.Error of the cpu platform for call.
func hipError(t *testing.T, err error, call string) {
	t.Helper()
	var he *hipsys.Error
	if !errors.As(err, &he) {
		t.Fatalf("%s returned %T (%v), not a *hipsys.Error", call, err, err)
	}
	if he.Platform != "cpu" || he.Call != call {
		t.Fatalf("%s returned an error for %s/%s: %v", call, he.Platform, he.Call, err)
	}
}

func bigExtent(pitch, width, height uint64) *big.Int {
	if width == 0 || height == 0 {
		return new(big.Int)
	}
	e := new(big.Int).Mul(new(big.Int).SetUint64(height-1), new(big.Int).SetUint64(pitch))
	return e.Add(e, new(big.Int).SetUint64(width))
}

func FuzzMemcpy2D(f *testing.F) {
	const dev, dev2, small, host, hostSmall = 0, 1, 2, 3, 4
	const maxU = ^uint64(0)
	dd, hd := int32(hipsys.MemcpyDeviceToDevice), int32(hipsys.MemcpyHostToDevice)
	// dstSel, dstOff, dpitch, srcSel, srcOff, spitch, width, height, kind, async
	f.Add(uint8(dev), uint64(0), uint64(160), uint8(dev2), uint64(0), uint64(128), uint64(100), uint64(7), dd, false)
	f.Add(uint8(dev), uint64(64), uint64(64), uint8(dev), uint64(0), uint64(64), uint64(64), uint64(8), dd, true) // overlapping rows
	f.Add(uint8(host), uint64(0), uint64(100), uint8(dev), uint64(8), uint64(200), uint64(50), uint64(10), int32(hipsys.MemcpyDefault), false)
	f.Add(uint8(small), uint64(0), uint64(8), uint8(hostSmall), uint64(0), uint64(8), uint64(8), uint64(8), hd, true) // exactly 64 bytes
	f.Add(uint8(dev), uint64(100), maxU, uint8(dev2), uint64(0), uint64(64), uint64(64), uint64(2), dd, false)
	f.Fuzz(func(t *testing.T, dstSel uint8, dstOff, dpitch uint64, srcSel uint8, srcOff, spitch, width, height uint64, kind int32, async bool) {
		fx := fuzz2DFixture(t)
		model := fx.reset()
		c := hipsys.Copy2D{Dst: fx.addr(dstSel, dstOff), DstPitch: dpitch, Src: fx.addr(srcSel, srcOff), SrcPitch: spitch,
			Width: width, Height: height, Kind: hipsys.MemcpyKind(kind)}
		call := "hipMemcpy2D"
		var err error
		if async {
			call = "hipMemcpy2DAsync"
			err = fx.p.Memcpy2DAsync(c, fx.stream)
			if serr := fx.p.StreamSynchronize(fx.stream); serr != nil {
				t.Fatalf("the stream failed after %s returned %v: %v", call, err, serr)
			}
		} else {
			err = fx.p.Memcpy2D(c)
		}

		// The model: is this copy valid, and what does it write?
		valid := kind >= 0 && kind <= int32(hipsys.MemcpyDefault)
		empty := width == 0 || height == 0
		di, doff := fx.locate(c.Dst, bigExtent(dpitch, width, height))
		si, soff := fx.locate(c.Src, bigExtent(spitch, width, height))
		if valid && !empty {
			valid = dpitch >= width && spitch >= width && di >= 0 && si >= 0
		}
		if valid && !empty {
			wantHost := map[hipsys.MemcpyKind][2]bool{ // dst, src
				hipsys.MemcpyHostToHost: {true, true}, hipsys.MemcpyHostToDevice: {false, true},
				hipsys.MemcpyDeviceToHost: {true, false}, hipsys.MemcpyDeviceToDevice: {false, false},
			}
			if w, ok := wantHost[c.Kind]; ok {
				valid = fx.bufs[di].host == w[0] && fx.bufs[si].host == w[1]
			}
		}
		switch {
		case err != nil:
			hipError(t, err, call)
			if valid {
				t.Fatalf("%s refused a valid copy %+v: %v", call, c, err)
			}
			fx.check(t, model, call+" failed, so nothing may change")
		case !valid:
			t.Fatalf("%s returned nil for an invalid copy %+v", call, c)
		default:
			if !empty {
				for r := uint64(0); r < height; r++ {
					copy(model[di][doff+int(r*dpitch):][:width], model[si][soff+int(r*spitch):][:width])
				}
			}
			fx.check(t, model, call+" returned nil, so the rows moved and nothing else")
		}
	})
}

func FuzzMemcpy(f *testing.F) {
	const dev, dev2, small, host = 0, 1, 2, 3
	// op, dstSel, dstOff, srcSel, srcOff, size, value
	for op := uint8(0); op < numCopyOps; op++ {
		f.Add(op, uint8(dev), uint64(16), uint8(dev2), uint64(32), uint64(100), byte(0xab))
	}
	f.Add(uint8(opHtoDAsync), uint8(small), uint64(0), uint8(host), uint64(0), uint64(64), byte(0))
	f.Fuzz(func(t *testing.T, op uint8, dstSel uint8, dstOff uint64, srcSel uint8, srcOff, size uint64, value byte) {
		fx := fuzz1DFixture(t)
		model := fx.reset()
		op %= numCopyOps
		dst, src := fx.addr(dstSel, dstOff), fx.addr(srcSel, srcOff)
		// A Go slice's length is bounded by memory: sync copies to and from Go memory use
		// at most 8 KiB (past every buffer), the other calls take size as it comes.
		goLen := min(size, 8192)
		goSrc := make([]byte, goLen)
		for i := range goSrc {
			goSrc[i] = byte(i*13 + 5)
		}
		goDst := make([]byte, goLen)
		spec := copyOps[op]
		n := size
		if spec.goSide {
			n = goLen
		}
		err := spec.do(fx, dst, src, n, value, goSrc, goDst)
		if spec.async {
			if serr := fx.p.StreamSynchronize(fx.stream); serr != nil {
				t.Fatalf("the stream failed after %s returned %v: %v", spec.call, err, serr)
			}
		}

		span := new(big.Int).SetUint64(n)
		di, doff := fx.locate(dst, span)
		si, soff := fx.locate(src, span)
		valid := n == 0 ||
			((spec.dst == sideGo || (di >= 0 && fx.bufs[di].host == (spec.dst == sideHost))) &&
				(spec.src == sideNone || spec.src == sideGo || (si >= 0 && fx.bufs[si].host == (spec.src == sideHost))))
		switch {
		case err != nil:
			hipError(t, err, spec.call)
			if valid {
				t.Fatalf("%s refused a valid copy of %d bytes (dst %#x, src %#x): %v", spec.call, n, dst, src, err)
			}
			fx.check(t, model, spec.call+" failed, so nothing may change")
		case !valid:
			t.Fatalf("%s returned nil for an invalid copy of %d bytes (dst %#x, src %#x)", spec.call, n, dst, src)
		default:
			if n > 0 {
				switch {
				case spec.src == sideNone:
					for i := range model[di][doff : doff+int(n)] {
						model[di][doff+i] = value
					}
				case spec.src == sideGo:
					copy(model[di][doff:doff+int(n)], goSrc)
				case spec.dst == sideGo:
					if !bytes.Equal(goDst, model[si][soff:soff+int(n)]) {
						t.Fatalf("%s returned nil but the bytes read are not the source's", spec.call)
					}
				default:
					copy(model[di][doff:doff+int(n)], model[si][soff:soff+int(n)])
				}
			}
			fx.check(t, model, spec.call+" returned nil, so the bytes moved and nothing else")
		}
	})
}

// The linear calls, each described by what its sides are.
type side uint8

const (
	sideDevice side = iota
	sideHost        // pinned host memory
	sideGo          // a Go slice
	sideNone        // a memset has no source
)

const (
	opMemset = iota
	opMemsetAsync
	opHtoD
	opDtoH
	opDtoD
	opHtoDAsync
	opDtoHAsync
	opDtoDAsync
	numCopyOps
)

var copyOps = [numCopyOps]struct {
	call     string
	dst, src side
	goSide   bool
	async    bool
	do       func(fx *copyFixture, dst, src uintptr, n uint64, v byte, goSrc, goDst []byte) error
}{
	opMemset: {"hipMemset", sideDevice, sideNone, false, false, func(fx *copyFixture, dst, _ uintptr, n uint64, v byte, _, _ []byte) error {
		return fx.p.Memset(hipsys.DevicePtr(dst), v, n)
	}},
	opMemsetAsync: {"hipMemsetAsync", sideDevice, sideNone, false, true, func(fx *copyFixture, dst, _ uintptr, n uint64, v byte, _, _ []byte) error {
		return fx.p.MemsetAsync(hipsys.DevicePtr(dst), v, n, fx.stream)
	}},
	opHtoD: {"hipMemcpyHtoD", sideDevice, sideGo, true, false, func(fx *copyFixture, dst, _ uintptr, _ uint64, _ byte, goSrc, _ []byte) error {
		return fx.p.MemcpyHtoD(hipsys.DevicePtr(dst), goSrc)
	}},
	opDtoH: {"hipMemcpyDtoH", sideGo, sideDevice, true, false, func(fx *copyFixture, _, src uintptr, _ uint64, _ byte, _, goDst []byte) error {
		return fx.p.MemcpyDtoH(goDst, hipsys.DevicePtr(src))
	}},
	opDtoD: {"hipMemcpyDtoD", sideDevice, sideDevice, false, false, func(fx *copyFixture, dst, src uintptr, n uint64, _ byte, _, _ []byte) error {
		return fx.p.MemcpyDtoD(hipsys.DevicePtr(dst), hipsys.DevicePtr(src), n)
	}},
	opHtoDAsync: {"hipMemcpyHtoDAsync", sideDevice, sideHost, false, true, func(fx *copyFixture, dst, src uintptr, n uint64, _ byte, _, _ []byte) error {
		return fx.p.MemcpyHtoDAsync(hipsys.DevicePtr(dst), hipsys.HostPtr(src), n, fx.stream)
	}},
	opDtoHAsync: {"hipMemcpyDtoHAsync", sideHost, sideDevice, false, true, func(fx *copyFixture, dst, src uintptr, n uint64, _ byte, _, _ []byte) error {
		return fx.p.MemcpyDtoHAsync(hipsys.HostPtr(dst), hipsys.DevicePtr(src), n, fx.stream)
	}},
	opDtoDAsync: {"hipMemcpyDtoDAsync", sideDevice, sideDevice, false, true, func(fx *copyFixture, dst, src uintptr, n uint64, _ byte, _, _ []byte) error {
		return fx.p.MemcpyDtoDAsync(hipsys.DevicePtr(dst), hipsys.DevicePtr(src), n, fx.stream)
	}},
}

// The fixtures are made once per fuzz target and process (a fuzz worker runs many
// inputs; each input resets the buffers), not once per input: a platform per input would
// spend the fuzzing time starting stream workers.
var fixtures = map[string]*copyFixture{}

func fuzzFixture(t *testing.T, name string) *copyFixture {
	if fx := fixtures[name]; fx != nil {
		return fx
	}
	// The fixture outlives the input that made it: its cleanups are never run, which
	// is what a fuzz worker's process-long fixture needs.
	fx := newCopyFixture(&keepAlive{TB: t})
	fixtures[name] = fx
	return fx
}

func fuzz2DFixture(t *testing.T) *copyFixture { return fuzzFixture(t, "2D") }
func fuzz1DFixture(t *testing.T) *copyFixture { return fuzzFixture(t, "1D") }

// keepAlive is a testing.TB whose Cleanup is dropped.
type keepAlive struct{ testing.TB }

func (keepAlive) Cleanup(func()) {}
