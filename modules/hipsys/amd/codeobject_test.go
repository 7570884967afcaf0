package amd

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bundle builds a clang offload bundle of the given entries (target ID → contents).
func bundle(entries [][2]string) []byte {
	var hdr, body bytes.Buffer
	hdr.WriteString(bundleMagic)
	binary.Write(&hdr, binary.LittleEndian, uint64(len(entries)))
	size := hdr.Len()
	for _, e := range entries {
		size += 24 + len(e[0])
	}
	for _, e := range entries {
		binary.Write(&hdr, binary.LittleEndian, uint64(size+body.Len()))
		binary.Write(&hdr, binary.LittleEndian, uint64(len(e[1])))
		binary.Write(&hdr, binary.LittleEndian, uint64(len(e[0])))
		hdr.WriteString(e[0])
		body.WriteString(e[1])
	}
	return append(hdr.Bytes(), body.Bytes()...)
}

func TestUnbundlePicksTheArchitecture(t *testing.T) {
	b := bundle([][2]string{
		{"host-x86_64-unknown-linux-gnu", ""},
		{"hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "ELF-90a"},
		{"hipv4-amdgcn-amd-amdhsa--gfx1100", "ELF-1100"},
	})
	for arch, want := range map[string]string{"gfx90a": "ELF-90a", "gfx1100": "ELF-1100", "gfx90a:xnack-": "ELF-90a"} {
		got, err := unbundle(b, arch)
		require.NoError(t, err, arch)
		assert.Equal(t, want, string(got))
	}
	_, err := unbundle(b, "gfx908")
	assert.ErrorContains(t, err, "0 AMDGPU entries")
	_, err = unbundle(b, "")
	assert.ErrorContains(t, err, "2 AMDGPU entries", "two candidates and no architecture is ambiguous")

	one := bundle([][2]string{{"hipv4-amdgcn-amd-amdhsa--gfx908", "ELF"}})
	got, err := unbundle(one, "")
	require.NoError(t, err)
	assert.Equal(t, "ELF", string(got))
}

func TestUnbundleRejectsMalformedInput(t *testing.T) {
	good := bundle([][2]string{{"hipv4-amdgcn-amd-amdhsa--gfx90a", "ELF"}})
	for name, b := range map[string][]byte{
		"truncated count":   []byte(bundleMagic + "\x01"),
		"truncated entry":   good[:len(bundleMagic)+8+10],
		"offset past end":   func() []byte { c := bytes.Clone(good); c[len(bundleMagic)+8] = 0xff; return c }(),
		"huge entry count":  func() []byte { c := bytes.Clone(good); c[len(bundleMagic)+7] = 0x7f; return c }(),
		"compressed bundle": []byte("CCOB\x01\x00\x00\x00"),
	} {
		_, err := unbundle(b, "gfx90a")
		assert.Error(t, err, name)
	}
}

func FuzzUnbundle(f *testing.F) {
	f.Add(bundle([][2]string{{"hipv4-amdgcn-amd-amdhsa--gfx90a", "ELF"}}), "gfx90a")
	f.Fuzz(func(t *testing.T, b []byte, arch string) {
		_, _ = unbundle(append([]byte(bundleMagic), b...), arch)
		_, _ = ParseCodeObject(b, arch)
	})
}

func TestParseCodeObjectRejectsOtherMachines(t *testing.T) {
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Skip(err)
	}
	_, err = ParseCodeObject(self, "")
	assert.ErrorContains(t, err, "not AMDGPU (224)")
	_, err = ParseCodeObject([]byte("nope"), "")
	assert.ErrorContains(t, err, "not an ELF")
}

func TestRTCOptionsByRelease(t *testing.T) {
	tests := []struct {
		name    string
		version int
		user    []string
		want    []string
	}{
		{"5.x: the hip/ headers come with the program, not an include directory", 50200000, nil,
			[]string{"-O3", "-std=c++17", "--offload-arch=gfx90a"}},
		{"6.1 supplies its own headers", 60100000, nil,
			[]string{"-O3", "-std=c++17", "--offload-arch=gfx90a"}},
		{"caller's optimization and standard win; 6.2 has the sync builtins", 60200000, []string{"-O1", "--std=c++20"},
			[]string{"-DHIP_ENABLE_WARP_SYNC_BUILTINS", "--offload-arch=gfx90a", "-O1", "--std=c++20"}},
		{"caller's architecture wins", 70000000, []string{"--offload-arch=gfx942"},
			[]string{"-O3", "-std=c++17", "-DHIP_ENABLE_WARP_SYNC_BUILTINS", "--offload-arch=gfx942"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &library{version: tc.version}
			l.isaOnce.Do(func() {}) // no comgr: architectures are not checked
			got, err := l.rtcOptions("gfx90a", tc.user)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	l := &library{version: 60200000}
	l.isaOnce.Do(func() { l.isas = []string{"gfx90a", "gfx942"} })
	_, err := l.rtcOptions("gfx1100", nil)
	assert.ErrorContains(t, err, "does not support gfx1100 (it supports gfx90a, gfx942)")
	_, err = l.rtcOptions("gfx942:sramecc+:xnack-", nil)
	assert.NoError(t, err)
}
