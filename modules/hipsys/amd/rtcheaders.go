package amd

import (
	"embed"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// rtcInclude holds the headers cubehip gives hiprtc: cubehip_hiprtc.h for every program,
// and, before ROCm 6.1, the stand-ins for what hiprtc's built-in preamble already holds
// (and for the hip/ headers that would define it again, hip_complex.h's vector types).
//
//go:embed rtcinclude/*
var rtcInclude embed.FS

// warpSyncVersion is the first HIP with the _sync warp functions (behind
// HIP_ENABLE_WARP_SYNC_BUILTINS, which cubehip then defines).
const warpSyncVersion = 60200000

// preambleHeaders are the hip/ headers whose content hiprtc before 6.1 compiles into
// every program already (a preprocessed hip_runtime.h and hip_fp16.h, include guards
// gone): the real files would define it all again, so these names get a header that
// adds only cubehip_hiprtc.h.
var preambleHeaders = []string{
	"hip/hip_runtime.h", "hip/hip_runtime_api.h", "hip/hip_fp16.h", "hip/hip_vector_types.h",
	"hip/hip_common.h", "hip/math_functions.h", "hip/device_functions.h", "hip/hip_version.h",
	"hip/hip_texture_types.h", "hip/driver_types.h", "hip/surface_types.h", "hip/texture_types.h",
}

// libcHeaders are the C library headers (and their C++ forms) kernels include, which
// hiprtc before 6.1 cannot compile: it searches the system's include directory but not
// the compiler's own (<stdio.h> stops at <stddef.h>), and what it finds there is the host's
// (int64_t as long, against the preamble's long long). Each is cubehip's stand-in
// (rtcinclude/), built on what the preamble already declares for the device.
var libcHeaders = []string{
	"assert.h", "cassert", "float.h", "cfloat", "limits.h", "climits", "math.h", "cmath",
	"stddef.h", "cstddef", "stdint.h", "cstdint", "stdio.h", "cstdio", "stdlib.h", "cstdlib",
	"string.h", "cstring", "new", "type_traits",
}

func embedded(name string) string {
	b, err := rtcInclude.ReadFile("rtcinclude/" + name)
	if err != nil {
		panic("amd: missing embedded header " + name) // the embed pattern covers every name used
	}
	return string(b)
}

// rtcProgram is what hiprtc compiles for source: cubehip_hiprtc.h included first (with
// #line putting the user's lines back at 1, so hiprtc's messages number them as the
// user does), and the headers: the user's, then cubehip's for the names the user gave
// none of.
func (l *library) rtcProgram(source string, user []hipsys.Header) (string, []hipsys.Header) {
	var prefix strings.Builder
	if l.version < warpSyncVersion {
		prefix.WriteString("#define CUBEHIP_HIPRTC_WARP_SYNC 1\n")
	}
	prefix.WriteString("#include \"cubehip_hiprtc.h\"\n#line 1\n")
	ours := map[string]string{"cubehip_hiprtc.h": embedded("cubehip_hiprtc.h")}
	if l.version < rtcHeadersVersion {
		for _, n := range preambleHeaders {
			ours[n] = "#pragma once\n#include \"cubehip_hiprtc.h\"\n"
		}
		ours["hip/hip_cooperative_groups.h"] = embedded("hip_cooperative_groups.h")
		ours["hip/hip_bf16.h"] = embedded("hip_bf16.h")
		ours["hip/hip_complex.h"] = embedded("hip_complex.h")
		for _, n := range libcHeaders {
			ours[n] = embedded(n)
		}
	}
	headers := append([]hipsys.Header{}, user...)
	taken := map[string]bool{}
	for _, h := range user {
		taken[h.Name] = true
	}
	for _, n := range sortedKeys(ours) {
		if !taken[n] {
			headers = append(headers, hipsys.Header{Name: n, Source: ours[n]})
		}
	}
	return prefix.String() + source, headers
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
