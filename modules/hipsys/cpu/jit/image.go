package jit

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// imageMagic starts every code object the cpu platform's hiprtc gives out. The version
// digit changes whenever the layout below does.
const imageMagic = "CUBEHIPCPU1\n"

const flagBarrier = 1 // the module's kernels run as fibers

// image is a decoded code object: the entry names, how its kernels run, and the shared
// object (an ELF file for this host) that holds them.
type image struct {
	flags   uint32
	entries []string
	object  []byte
}

// encode lays the image out as: magic, flags u32, entry count u32, each entry as u16
// length + name, object length u64, object bytes; little-endian throughout.
func (im *image) encode() []byte {
	var b bytes.Buffer
	b.WriteString(imageMagic)
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
	binary.LittleEndian.PutUint64(w[:], uint64(len(im.object)))
	b.Write(w[:])
	b.Write(im.object)
	return b.Bytes()
}

var errImage = errors.New("not a cubehip cpu code object")

// decodeImage checks every length against what is left, so garbage (or another
// platform's code object) is an error, never an out-of-range read.
func decodeImage(b []byte) (*image, error) {
	if !bytes.HasPrefix(b, []byte(imageMagic)) {
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
