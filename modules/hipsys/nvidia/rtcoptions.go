package nvidia

import (
	"fmt"
	"strings"
)

// translateOptions turns hiprtc (clang) options into NVRTC's. HIP-on-AMD options that
// mean nothing on NVIDIA are dropped rather than passed on, because NVRTC rejects any
// option it does not know and the same option list must work on every platform.
// Anything unrecognized is passed through, so a genuine mistake still reaches NVRTC and
// comes back as its HIPRTC_ERROR_INVALID_OPTION.
func translateOptions(opts []string) []string {
	out := make([]string, 0, len(opts)+4)
	for i := 0; i < len(opts); i++ {
		o := strings.TrimSpace(opts[i])
		switch {
		case o == "":
		case o == "-O" || (strings.HasPrefix(o, "-O") && len(o) == 3):
			// NVRTC always optimizes (-O3 is its default) and has no -O flag.
		case strings.HasPrefix(o, "--std=") || strings.HasPrefix(o, "-std="):
			out = append(out, "-std="+o[strings.IndexByte(o, '=')+1:])
		case o == "-D" || o == "-I" || o == "-U":
			// clang's separated form; NVRTC wants the value joined.
			if i+1 < len(opts) {
				i++
				out = append(out, o+opts[i])
			}
		case strings.HasPrefix(o, "--offload-arch"), strings.HasPrefix(o, "-mcpu="),
			strings.HasPrefix(o, "-mwavefrontsize"), strings.HasPrefix(o, "-mno-wavefrontsize"),
			o == "-mcumode", o == "-mno-cumode", strings.HasPrefix(o, "-fgpu-"),
			o == "-fno-gpu-rdc", o == "--hip-version", strings.HasPrefix(o, "-mllvm"),
			strings.HasPrefix(o, "-Wno-"), o == "-w" || o == "-g" || o == "-ggdb":
			// AMD code-object and clang diagnostics settings; the architecture is chosen
			// from the device (archOption).
		case o == "-ffast-math" || o == "-fcuda-flush-denormals-to-zero":
			out = append(out, "--use_fast_math")
		default:
			out = append(out, o)
		}
	}
	return out
}

// hasArch reports whether the options already name an architecture, in which case the
// caller's choice stands.
func hasArch(opts []string) bool {
	for _, o := range opts {
		if strings.HasPrefix(o, "--gpu-architecture") || strings.HasPrefix(o, "-arch") {
			return true
		}
	}
	return false
}

// archOption chooses what NVRTC builds for a device of compute capability cc (major*10
// + minor) given the architectures this NVRTC supports (nil when it cannot say, before
// CUDA 11.2). It is CUBIN for the device's own SM when NVRTC knows it, so nothing is
// compiled at load time; otherwise PTX for the newest virtual architecture NVRTC has that
// the device can run, which the driver compiles for the device at load (an NVRTC older
// than the device). cubin says which of the two RTCGetCode must return.
func archOption(cc int, supported []int) (opt string, cubin bool) {
	if len(supported) == 0 {
		return fmt.Sprintf("--gpu-architecture=sm_%d", cc), true
	}
	best := 0
	for _, a := range supported {
		if a == cc {
			return fmt.Sprintf("--gpu-architecture=sm_%d", cc), true
		}
		if a < cc && a > best {
			best = a
		}
	}
	if best == 0 {
		// The device is older than anything NVRTC builds for: ask for its SM anyway so
		// NVRTC's own error says why.
		return fmt.Sprintf("--gpu-architecture=sm_%d", cc), true
	}
	return fmt.Sprintf("--gpu-architecture=compute_%d", best), false
}
