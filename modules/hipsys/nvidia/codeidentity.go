package nvidia

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

var _ hipsys.CodeIdentifier = (*Platform)(nil)

// CodeIdentity names what, besides the program, decides the code RTCCompileProgram
// builds with options on the calling thread's current device (codeIdentity). NVRTC is
// loaded by the first call, as by RTCCreateProgram; its absence is the same error.
func (p *Platform) CodeIdentity(options []string) (string, error) {
	const call = "hiprtcCompileProgram"
	nv, err := p.loadNVRTC()
	if err != nil {
		return "", hipsys.NewRTCError(platformName, call, hipsys.RTCErrorProgramCreationFailure, err.Error())
	}
	props, err := p.GetDeviceProperties(currentDevice())
	if err != nil {
		return "", hipsys.NewRTCError(platformName, call, hipsys.RTCErrorInternalError, err.Error())
	}
	return codeIdentity(nv, props.Major*10+props.Minor, options), nil
}

// codeIdentity hashes what decides NVRTC's output for a program:
//   - NVRTC itself: its version and its file (path, size, modification time), since
//     nvrtcVersion names no patch release and a toolkit upgraded in place keeps the path;
//   - the full option list the compile passes (compileOptions: the caller's translated,
//     the architecture chosen for the device from those NVRTC supports, the toolkit's
//     include folders) and whether it builds CUBIN or PTX;
//   - the toolkit's cuda_fp16.h in those folders (the one toolkit header hip_fp16.h
//     pulls in), by its file, since another toolkit can sit at the same path;
//   - the in-memory HIP headers cubehip adds to every program.
func codeIdentity(nv *nvrtcLib, cc int, options []string) string {
	h := sha256.New()
	part := hashPart(h)
	part("nvidia")
	part(strconv.Itoa(nv.major) + "." + strconv.Itoa(nv.minor))
	if nv.lib != nil {
		part(fileStamp(nv.lib.Path()))
	}
	opts, cubin := compileOptions(options, cc, nv)
	part(strconv.FormatBool(cubin))
	part(strconv.Itoa(len(opts)))
	for _, o := range opts {
		part(o)
	}
	for _, d := range nv.includes {
		part(fileStamp(filepath.Join(d, "cuda_fp16.h")))
	}
	part(builtinHeadersHash())
	return hex.EncodeToString(h.Sum(nil))
}

// builtinHeadersHash is the hash of cubehip's in-memory headers, which never change
// within a process.
var builtinHeadersHash = onceHeadersHash()

func onceHeadersHash() func() string {
	return sync.OnceValue(func() string {
		h := sha256.New()
		part := hashPart(h)
		for _, b := range builtinHeaders {
			part(b.Name)
			part(b.Source)
		}
		return hex.EncodeToString(h.Sum(nil))
	})
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
