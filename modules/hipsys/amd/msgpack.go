package amd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// decodeMsgpack decodes the one MessagePack value that b holds, as AMD's code object
// metadata (code object version 3 and later) stores it: maps become map[string]any (the
// metadata's keys are all strings, and a key of another type is an error), arrays
// []any, strings string, unsigned integers uint64, negative ones int64, floats float64,
// booleans bool, nil nil, binary and extension data []byte. Every length is checked
// against the bytes left before anything is allocated, and nesting is bounded, so any
// input, however crafted, gives a value or an error and never a panic or a huge
// allocation. Bytes after the value are an error.
//
// It is the whole format, decoded by hand rather than through a library: the metadata
// is a few hundred bytes of plain maps, arrays, strings and integers, and a dependency
// with a reflection-driven decoder would be far more code than the job.
func decodeMsgpack(b []byte) (any, error) {
	d := &mpDecoder{b: b}
	v, err := d.value(0)
	if err != nil {
		return nil, fmt.Errorf("msgpack at byte %d: %w", d.off, err)
	}
	if d.off != len(b) {
		return nil, fmt.Errorf("msgpack: %d bytes after the value", len(b)-d.off)
	}
	return v, nil
}

// maxDepth bounds nesting: the metadata is four levels deep; a crafted input of nested
// one-byte arrays must not exhaust the stack.
const maxDepth = 32

var errShort = errors.New("truncated")

type mpDecoder struct {
	b   []byte
	off int
}

// take returns the next n bytes.
func (d *mpDecoder) take(n uint64) ([]byte, error) {
	if n > uint64(len(d.b)-d.off) {
		return nil, errShort
	}
	s := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return s, nil
}

// uint reads an n-byte big-endian unsigned integer.
func (d *mpDecoder) uint(n int) (uint64, error) {
	s, err := d.take(uint64(n))
	if err != nil {
		return 0, err
	}
	switch n {
	case 1:
		return uint64(s[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(s)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(s)), nil
	}
	return binary.BigEndian.Uint64(s), nil
}

func (d *mpDecoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deeply")
	}
	tb, err := d.take(1)
	if err != nil {
		return nil, err
	}
	t := tb[0]
	switch {
	case t <= 0x7f:
		return uint64(t), nil
	case t >= 0xe0:
		return int64(int8(t)), nil
	case t&0xf0 == 0x80:
		return d.mapOf(uint64(t&0x0f), depth)
	case t&0xf0 == 0x90:
		return d.arrayOf(uint64(t&0x0f), depth)
	case t&0xe0 == 0xa0:
		return d.str(uint64(t & 0x1f))
	}
	// Sized forms: the low bits of t say how many bytes the length or value takes.
	size := func(base byte) int { return 1 << (t - base) }
	switch t {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xc5, 0xc6: // bin 8/16/32
		n, err := d.uint(size(0xc4))
		if err != nil {
			return nil, err
		}
		return d.bytes(n)
	case 0xc7, 0xc8, 0xc9: // ext 8/16/32: length, type, data
		n, err := d.uint(size(0xc7))
		if err != nil {
			return nil, err
		}
		if _, err := d.take(1); err != nil {
			return nil, err
		}
		return d.bytes(n)
	case 0xca:
		v, err := d.uint(4)
		return float64(math.Float32frombits(uint32(v))), err
	case 0xcb:
		v, err := d.uint(8)
		return math.Float64frombits(v), err
	case 0xcc, 0xcd, 0xce, 0xcf:
		return d.uint(size(0xcc))
	case 0xd0, 0xd1, 0xd2, 0xd3:
		n := size(0xd0)
		v, err := d.uint(n)
		if err != nil {
			return nil, err
		}
		shift := 64 - 8*n // sign-extend from n bytes
		return int64(v<<shift) >> shift, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1/2/4/8/16: type, data
		if _, err := d.take(1); err != nil {
			return nil, err
		}
		return d.bytes(uint64(size(0xd4)))
	case 0xd9, 0xda, 0xdb:
		n, err := d.uint(size(0xd9))
		if err != nil {
			return nil, err
		}
		return d.str(n)
	case 0xdc, 0xdd:
		n, err := d.uint(2 << (t - 0xdc))
		if err != nil {
			return nil, err
		}
		return d.arrayOf(n, depth)
	case 0xde, 0xdf:
		n, err := d.uint(2 << (t - 0xde))
		if err != nil {
			return nil, err
		}
		return d.mapOf(n, depth)
	}
	return nil, fmt.Errorf("byte %#x is not a MessagePack type", t)
}

func (d *mpDecoder) bytes(n uint64) ([]byte, error) {
	s, err := d.take(n)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), s...), nil
}

func (d *mpDecoder) str(n uint64) (string, error) {
	s, err := d.take(n)
	return string(s), err
}

// arrayOf decodes n values. Each takes at least one byte, so a count beyond the bytes
// left is refused before the slice is made.
func (d *mpDecoder) arrayOf(n uint64, depth int) ([]any, error) {
	if n > uint64(len(d.b)-d.off) {
		return nil, errShort
	}
	out := make([]any, n)
	for i := range out {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// mapOf decodes n key-value pairs (two bytes at least each).
func (d *mpDecoder) mapOf(n uint64, depth int) (map[string]any, error) {
	if n > uint64(len(d.b)-d.off)/2 {
		return nil, errShort
	}
	out := make(map[string]any, n)
	for range n {
		k, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("map key %v (%T) is not a string", k, k)
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}
