package jit

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// imageMagic starts every code object the cpu platform's hiprtc gives out. The version
// digit changes whenever the layout below does.
const imageMagic = "CUBEHIPCPU1\n"

// imageMagicNamed starts a code object compiled with name expressions: imageMagic's
// layout with the expressions' records after the entries. An object without any keeps
// the first layout byte for byte, so the objects cached before name expressions existed
// still load, and those of the same program still hash the same.
const imageMagicNamed = "CUBEHIPCPU2\n"

const flagBarrier = 1 // the module's kernels run as fibers

const flagShadow = 2 // the module reads memcheck's inline shadow (shadow.go)

// flagChecksShift places a checked module's hipsys.Checks in the flags' second byte.
const flagChecksShift = 8

// image is a decoded code object: the entry names, how its kernels run, the name
// expressions it was compiled with, and the shared object (an ELF file for this host)
// that holds them.
type image struct {
	flags   uint32
	entries []string // extern "C" entries: each launcher is cubehip_run_<name>
	names   []named
	object  []byte
}

// named is a name expression of the program and what the compile made of it: the
// symbol it designates (its lowered name) and, when that is a kernel the jit wrapped,
// the suffix of the launcher generated for it (cubehip_run_<launcher>); "" otherwise.
type named struct{ expr, lowered, launcher string }

// encode lays the image out as: magic, flags u32, entry count u32, each entry as u16
// length + name, (imageMagicNamed only: name count u32, each as its expression, lowered
// name and launcher, each u32 length + bytes), object length u64, object bytes;
// little-endian throughout.
func (im *image) encode() []byte {
	var b bytes.Buffer
	if len(im.names) == 0 {
		b.WriteString(imageMagic)
	} else {
		b.WriteString(imageMagicNamed)
	}
	var w [8]byte
	binary.LittleEndian.PutUint32(w[:4], im.flags)
	b.Write(w[:4])
	binary.LittleEndian.PutUint32(w[:4], uint32(len(im.entries)))
	b.Write(w[:4])
	for _, e := range im.entries {
		binary.LittleEndian.PutUint16(w[:2], uint16(len(e)))
		b.Write(w[:2])
		b.WriteString(e)
	}
	if len(im.names) > 0 {
		binary.LittleEndian.PutUint32(w[:4], uint32(len(im.names)))
		b.Write(w[:4])
		for _, n := range im.names {
			for _, s := range []string{n.expr, n.lowered, n.launcher} {
				binary.LittleEndian.PutUint32(w[:4], uint32(len(s)))
				b.Write(w[:4])
				b.WriteString(s)
			}
		}
	}
	binary.LittleEndian.PutUint64(w[:], uint64(len(im.object)))
	b.Write(w[:])
	b.Write(im.object)
	return b.Bytes()
}

var errImage = errors.New("not a cubehip cpu code object")

// decodeImage checks every length against what is left, so garbage (or another
// platform's code object) is an error, never an out-of-range read.
func decodeImage(b []byte) (*image, error) {
	withNames := bytes.HasPrefix(b, []byte(imageMagicNamed))
	if !withNames && !bytes.HasPrefix(b, []byte(imageMagic)) {
		return nil, errImage
	}
	b = b[len(imageMagic):]
	if len(b) < 8 {
		return nil, errImage
	}
	im := &image{flags: binary.LittleEndian.Uint32(b)}
	n := binary.LittleEndian.Uint32(b[4:])
	b = b[8:]
	if uint64(n) > uint64(len(b))/2 {
		return nil, errImage
	}
	for i := uint32(0); i < n; i++ {
		if len(b) < 2 {
			return nil, errImage
		}
		l := int(binary.LittleEndian.Uint16(b))
		if len(b) < 2+l || l == 0 {
			return nil, errImage
		}
		im.entries = append(im.entries, string(b[2:2+l]))
		b = b[2+l:]
	}
	if withNames {
		var ok bool
		if im.names, b, ok = decodeNames(b); !ok {
			return nil, errImage
		}
	}
	if len(b) < 8 {
		return nil, errImage
	}
	size := binary.LittleEndian.Uint64(b)
	b = b[8:]
	if size != uint64(len(b)) || !bytes.HasPrefix(b, []byte("\x7fELF")) {
		return nil, errImage
	}
	im.object = b
	return im, nil
}

// decodeNames reads imageMagicNamed's records and returns what follows them.
func decodeNames(b []byte) ([]named, []byte, bool) {
	str := func() (string, bool) {
		if len(b) < 4 {
			return "", false
		}
		l := binary.LittleEndian.Uint32(b)
		if uint64(len(b)-4) < uint64(l) {
			return "", false
		}
		s := string(b[4 : 4+l])
		b = b[4+l:]
		return s, true
	}
	if len(b) < 4 {
		return nil, nil, false
	}
	n := binary.LittleEndian.Uint32(b)
	b = b[4:]
	if n == 0 || uint64(n) > uint64(len(b))/12 {
		return nil, nil, false
	}
	out := make([]named, 0, n)
	for range n {
		var r named
		var ok1, ok2, ok3 bool
		r.expr, ok1 = str()
		r.lowered, ok2 = str()
		r.launcher, ok3 = str()
		if !ok1 || !ok2 || !ok3 || r.expr == "" || r.lowered == "" {
			return nil, nil, false
		}
		out = append(out, r)
	}
	return out, b, true
}
