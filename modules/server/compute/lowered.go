package compute

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"maps"
	"slices"
)

// The disk cache holds a module's code; a module with name expressions (Kernel.Names)
// also needs the symbols its compile gave them, which the code alone does not say, so
// its entry holds them ahead of the code: namesMagic, the length of their JSON, the
// JSON, then the code. The entry's name already covers the expressions (ModuleID), so
// an entry is never read for another set of them.
const namesMagic = "CUBEHIPNAMES1\n"

// packNames is the disk entry of code and the symbols of names.
func packNames(code []byte, names []string, lowered map[string]string) []byte {
	if len(names) == 0 {
		return code
	}
	js, err := json.Marshal(lowered)
	if err != nil {
		return nil // nothing is cached: the next process compiles again
	}
	out := make([]byte, 0, len(namesMagic)+8+len(js)+len(code))
	out = append(out, namesMagic...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(js)))
	out = append(out, js...)
	return append(out, code...)
}

// unpackNames is the code and symbols of a disk entry packNames made for names; nil
// code (a miss: compile again) where the entry is not whole or lacks a symbol.
func unpackNames(entry []byte, names []string) ([]byte, map[string]string) {
	if len(names) == 0 || entry == nil {
		return entry, nil
	}
	rest, ok := bytes.CutPrefix(entry, []byte(namesMagic))
	if !ok || len(rest) < 8 {
		return nil, nil
	}
	n := binary.LittleEndian.Uint64(rest)
	rest = rest[8:]
	if n > uint64(len(rest)) {
		return nil, nil
	}
	var lowered map[string]string
	if json.Unmarshal(rest[:n], &lowered) != nil {
		return nil, nil
	}
	keys := slices.Sorted(maps.Keys(lowered))
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(keys, slices.Compact(want)) {
		return nil, nil
	}
	return rest[n:], lowered
}

// stripNames is the code of an entry packNames made, whatever its names: the symbols are
// dropped (a kernel of the code is then taken by its symbol); an entry with no names
// header is code already.
func stripNames(entry []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(entry, []byte(namesMagic))
	if !ok {
		return entry, true
	}
	if len(rest) < 8 {
		return nil, false
	}
	n := binary.LittleEndian.Uint64(rest)
	rest = rest[8:]
	if n > uint64(len(rest)) {
		return nil, false
	}
	return rest[n:], true
}
