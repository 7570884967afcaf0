package amd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// A clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__", then the entry count and per entry
// its offset, size and target ID such as "hipv4-amdgcn-amd-amdhsa--gfx90a") is what hipcc
// and some hiprtc releases emit instead of a bare ELF. ROCm's loader takes either; the
// checks here need the ELF inside.
const (
	bundleMagic           = "__CLANG_OFFLOAD_BUNDLE__"
	compressedBundleMagic = "CCOB" // clang's compressed bundle (ROCm 6.2+ with --offload-compress)
)

// unbundle returns the AMDGPU ELF for arch from an offload bundle (the only AMDGPU entry
// when arch is ""). Every offset is bounds-checked: the bundle may come from anywhere.
func unbundle(b []byte, arch string) ([]byte, error) {
	if bytes.HasPrefix(b, []byte(compressedBundleMagic)) {
		return nil, fmt.Errorf("amd: compressed offload bundle (CCOB): rebuild without --offload-compress")
	}
	u64 := func(off int) (uint64, bool) {
		if off < 0 || off+8 > len(b) {
			return 0, false
		}
		return binary.LittleEndian.Uint64(b[off:]), true
	}
	pos := len(bundleMagic)
	n, ok := u64(pos)
	if !ok || n > 4096 {
		return nil, fmt.Errorf("amd: truncated offload bundle")
	}
	pos += 8
	base, _, _ := strings.Cut(arch, ":")
	var ids []string
	var found [][]byte
	for range n {
		off, ok1 := u64(pos)
		size, ok2 := u64(pos + 8)
		idLen, ok3 := u64(pos + 16)
		pos += 24
		if !ok1 || !ok2 || !ok3 || idLen > uint64(len(b)) || pos+int(idLen) > len(b) ||
			off > uint64(len(b)) || size > uint64(len(b))-off {
			return nil, fmt.Errorf("amd: malformed offload bundle entry")
		}
		id := string(b[pos : pos+int(idLen)])
		pos += int(idLen)
		ids = append(ids, id)
		if !strings.Contains(id, "amdgcn") || size == 0 {
			continue // the host entry is empty for hiprtc output
		}
		_, target, _ := strings.Cut(id, "--")
		target, _, _ = strings.Cut(target, ":")
		if base == "" || target == base {
			found = append(found, b[off:off+size])
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return nil, fmt.Errorf("amd: offload bundle has %d AMDGPU entries for %q (entries: %s)",
		len(found), arch, strings.Join(ids, ", "))
}
