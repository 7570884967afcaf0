package amd

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"os"
	"strconv"

	"github.com/cubehip/cubehip/modules/hipsys"
)

var _ hipsys.CodeIdentifier = (*Platform)(nil)

// CodeIdentity names what, besides the program, decides the code RTCCompileProgram
// builds with options on the calling thread's current device (library.codeIdentity).
// As RTCCompileProgram, it takes the architecture from options when they name one,
// else from the current device, and fails the same way without either.
func (p *Platform) CodeIdentity(options []string) (string, error) {
	arch := ""
	if explicitArch(options) == "" {
		var err error
		if arch, err = p.currentArch(); err != nil {
			return "", hipsys.NewRTCError(name, "hiprtcCompileProgram", hipsys.RTCErrorInvalidOption,
				"no --offload-arch given, and none from the current device: "+err.Error())
		}
	}
	return p.lib.codeIdentity(arch, options)
}

// codeIdentity hashes what decides hiprtc's output for a program compiled for arch:
//   - hiprtc itself: hiprtcVersion (major and minor only), the HIP runtime's version
//     (its patch release too: hiprtc comes from the same ROCm, and before 6.1 compiles
//     against the runtime's preamble), and hiprtc's file (path, size, modification
//     time), since a ROCm upgraded in place keeps its paths;
//   - the full option list the compile passes (rtcOptions: cubehip's defaults, the
//     architecture, the warp-sync switch, then the caller's);
//   - what cubehip adds to every program: the prefix before the user's source and the
//     headers it gives hiprtc (rtcProgram), which differ by ROCm release too.
func (l *library) codeIdentity(arch string, options []string) (string, error) {
	const call = "hiprtcCompileProgram"
	if l.rtc == nil {
		return "", hipsys.NewError(name, call, hipsys.ErrorNotSupported, l.rtcErr.Error())
	}
	opts, err := l.rtcOptions(arch, options)
	if err != nil {
		return "", hipsys.NewRTCError(name, call, hipsys.RTCErrorInvalidOption, err.Error())
	}
	h := sha256.New()
	part := hashPart(h)
	part("amd")
	part(strconv.Itoa(l.rtc.major) + "." + strconv.Itoa(l.rtc.minor))
	part(strconv.Itoa(l.version))
	part(l.rtc.lib)
	part(fileStamp(l.rtc.path))
	part(strconv.Itoa(len(opts)))
	for _, o := range opts {
		part(o)
	}
	prefix, headers := l.rtcProgram("", nil)
	part(prefix)
	part(strconv.Itoa(len(headers)))
	for _, hd := range headers {
		part(hd.Name)
		part(hd.Source)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileStamp names a file's version without reading it: its path, size and modification
// time (the path alone when it cannot be found).
func fileStamp(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return path
	}
	return path + "|" + strconv.FormatInt(st.Size(), 10) + "|" + strconv.FormatInt(st.ModTime().UnixNano(), 10)
}

// hashPart writes each string to h after its length, so that no two lists of parts
// concatenate to the same bytes.
func hashPart(h hash.Hash) func(string) {
	return func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
}
