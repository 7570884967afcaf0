package amd

import (
	"bytes"
	"encoding/binary"
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestDecodeMsgpackValues(t *testing.T) {
	f32 := make([]byte, 4)
	binary.BigEndian.PutUint32(f32, math.Float32bits(1.5))
	f64 := make([]byte, 8)
	binary.BigEndian.PutUint64(f64, math.Float64bits(-2.25))
	tests := []struct {
		name string
		in   []byte
		want any
	}{
		{"positive fixint", []byte{0x7f}, uint64(127)},
		{"negative fixint", []byte{0xe0}, int64(-32)},
		{"nil", []byte{0xc0}, nil},
		{"false", []byte{0xc2}, false},
		{"true", []byte{0xc3}, true},
		{"uint8", []byte{0xcc, 0xff}, uint64(255)},
		{"uint16", []byte{0xcd, 0x01, 0x00}, uint64(256)},
		{"uint32", []byte{0xce, 0, 1, 0, 0}, uint64(65536)},
		{"uint64", []byte{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint64(math.MaxUint64)},
		{"int8", []byte{0xd0, 0x80}, int64(-128)},
		{"int16", []byte{0xd1, 0xff, 0xfe}, int64(-2)},
		{"int32", []byte{0xd2, 0x7f, 0xff, 0xff, 0xff}, int64(math.MaxInt32)},
		{"int64", []byte{0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}, int64(math.MinInt64)},
		{"float32", append([]byte{0xca}, f32...), 1.5},
		{"float64", append([]byte{0xcb}, f64...), -2.25},
		{"fixstr", []byte{0xa3, 'a', 'b', 'c'}, "abc"},
		{"str8", []byte{0xd9, 2, 'h', 'i'}, "hi"},
		{"str16", []byte{0xda, 0, 1, 'x'}, "x"},
		{"str32", []byte{0xdb, 0, 0, 0, 0}, ""},
		{"bin8", []byte{0xc4, 2, 9, 8}, []byte{9, 8}},
		{"ext8", []byte{0xc7, 1, 5, 7}, []byte{7}},
		{"fixext2", []byte{0xd5, 5, 1, 2}, []byte{1, 2}},
		{"fixarray", []byte{0x92, 0x01, 0xa1, 'z'}, []any{uint64(1), "z"}},
		{"array16", []byte{0xdc, 0, 1, 0xc3}, []any{true}},
		{"fixmap", []byte{0x81, 0xa1, 'k', 0x02}, map[string]any{"k": uint64(2)}},
		{"map16", []byte{0xde, 0, 1, 0xa1, 'k', 0x90}, map[string]any{"k": []any{}}},
	}
	for _, tc := range tests {
		got, err := decodeMsgpack(tc.in)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}

func TestDecodeMsgpackRejectsMalformedInput(t *testing.T) {
	deep := bytes.Repeat([]byte{0x91}, 100)
	deep = append(deep, 0x01)
	for name, in := range map[string][]byte{
		"empty":               {},
		"never used (0xc1)":   {0xc1},
		"truncated uint32":    {0xce, 0, 0},
		"truncated string":    {0xa5, 'a', 'b'},
		"string past the end": {0xdb, 0xff, 0xff, 0xff, 0xff, 'a'},
		"huge array":          {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01},
		"huge map":            {0xdf, 0x7f, 0xff, 0xff, 0xff, 0xa1, 'k', 0x01},
		"integer map key":     {0x81, 0x01, 0x02},
		"trailing bytes":      {0x01, 0x02},
		"nested too deeply":   deep,
		"truncated ext type":  {0xd4},
	} {
		_, err := decodeMsgpack(in)
		assert.Error(t, err, name)
	}
}

// mp encodes the values metadata holds (maps with string keys, arrays, strings,
// unsigned integers), for building metadata the tests and the fuzz seeds need.
func mp(v any) []byte {
	var b bytes.Buffer
	var enc func(v any)
	enc = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			b.WriteByte(0xde)
			binary.Write(&b, binary.BigEndian, uint16(len(x)))
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				enc(k)
				enc(x[k])
			}
		case []any:
			b.WriteByte(0xdc)
			binary.Write(&b, binary.BigEndian, uint16(len(x)))
			for _, e := range x {
				enc(e)
			}
		case string:
			b.WriteByte(0xd9)
			b.WriteByte(byte(len(x)))
			b.WriteString(x)
		case int:
			b.WriteByte(0xcf)
			binary.Write(&b, binary.BigEndian, uint64(x))
		}
	}
	enc(v)
	return b.Bytes()
}

func arg(offset, size int, kind string) map[string]any {
	return map[string]any{".offset": offset, ".size": size, ".value_kind": kind}
}

func TestParseMetadata(t *testing.T) {
	named := arg(8, 4, "by_value")
	named[".name"] = "n"
	md := mp(map[string]any{
		"amdhsa.version": []any{1, 1},
		"amdhsa.kernels": []any{
			map[string]any{".name": "k", ".symbol": "k.kd", ".args": []any{
				arg(0, 8, "global_buffer"), named, arg(16, 8, "hidden_global_offset_x"), arg(24, 4, "dynamic_shared_pointer"),
			}},
			map[string]any{".name": "bare"},
		},
	})
	got, err := parseMetadata(md)
	require.NoError(t, err)
	assert.Equal(t, []Kernel{
		{Name: "k", Params: []hipsys.KernelParam{
			{Offset: 0, Size: 8, Kind: hipsys.ParamPointer}, {Offset: 8, Size: 4, Kind: hipsys.ParamValue, Name: "n"},
			{Offset: 24, Size: 4, Kind: hipsys.ParamUnknown},
		}},
		{Name: "bare", Params: []hipsys.KernelParam{}},
	}, got)

	for name, bad := range map[string]any{
		"not a map":        []any{},
		"no kernels":       map[string]any{"amdhsa.version": []any{1}},
		"kernel not a map": map[string]any{"amdhsa.kernels": []any{"k"}},
		"no name":          map[string]any{"amdhsa.kernels": []any{map[string]any{".args": []any{}}}},
		"args not a list":  map[string]any{"amdhsa.kernels": []any{map[string]any{".name": "k", ".args": "x"}}},
		"arg without kind": map[string]any{"amdhsa.kernels": []any{map[string]any{".name": "k", ".args": []any{map[string]any{".offset": 0, ".size": 8}}}}},
		"arg without size": map[string]any{"amdhsa.kernels": []any{map[string]any{".name": "k", ".args": []any{map[string]any{".offset": 0, ".value_kind": "by_value"}}}}},
		"offset over 32 bits": map[string]any{"amdhsa.kernels": []any{map[string]any{".name": "k",
			".args": []any{arg(1<<32, 8, "by_value")}}}},
	} {
		_, err := parseMetadata(mp(bad))
		assert.Error(t, err, name)
	}
}

func TestFindNote(t *testing.T) {
	note := func(name string, typ uint32, desc string) []byte {
		var b bytes.Buffer
		n := name + "\x00"
		binary.Write(&b, binary.LittleEndian, uint32(len(n)))
		binary.Write(&b, binary.LittleEndian, uint32(len(desc)))
		binary.Write(&b, binary.LittleEndian, typ)
		b.WriteString(n)
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
		b.WriteString(desc)
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
		return b.Bytes()
	}
	sec := append(note("GNU", 3, "abcde"), note("AMDGPU", 32, "metadata")...)
	desc, ok, err := findNote(sec, binary.LittleEndian, "AMDGPU", 32)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "metadata", string(desc))
	_, ok, err = findNote(sec, binary.LittleEndian, "AMDGPU", 10)
	assert.NoError(t, err)
	assert.False(t, ok)
	_, _, err = findNote(sec[:len(sec)-6], binary.LittleEndian, "AMDGPU", 32)
	assert.ErrorContains(t, err, "runs past the section")
	_, _, err = findNote(sec[:5], binary.LittleEndian, "AMDGPU", 32)
	assert.ErrorContains(t, err, "truncated")
}

// Any bytes, as a metadata note or a whole code object: an answer or an error, never a
// panic or a runaway allocation.
func FuzzParseMetadata(f *testing.F) {
	f.Add(mp(map[string]any{"amdhsa.kernels": []any{map[string]any{".name": "k", ".args": []any{arg(0, 8, "global_buffer")}}}}))
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add(bytes.Repeat([]byte{0x91}, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := decodeMsgpack(b); err != nil {
			return
		}
		kernels, err := parseMetadata(b)
		if err != nil {
			return
		}
		for _, k := range kernels {
			assert.NotEmpty(t, k.Name)
			assert.NotNil(t, k.Params)
		}
	})
}
