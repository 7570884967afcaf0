package amd

// #include "trampolines.h"
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// Environment variables that point the platform at a particular ROCm install instead of
// the loader's search path; each names one library (a file name or a path) and only that
// one is tried, so a typo is an error rather than a silent fall back to another ROCm.
const (
	EnvLibrary = "CUBEHIP_AMD_LIBRARY" // libamdhip64
	EnvHIPRTC  = "CUBEHIP_AMD_HIPRTC"  // libhiprtc
)

// libraryNames are tried newest first: one binary runs on whichever ROCm is installed.
// AMD's packages put ROCm under /opt/rocm, which is not always on the loader's path (a
// container without ld.so.conf entries for it), so that tree is tried after the sonames.
func libraryNames() []string {
	names := []string{"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}
	roots := []string{"/opt/rocm"}
	if r := os.Getenv("ROCM_PATH"); r != "" {
		roots = append([]string{r}, roots...)
	}
	for _, r := range roots {
		names = append(names, filepath.Join(r, "lib", "libamdhip64.so"))
	}
	return names
}

// MinVersion is the oldest HIP runtime supported, as hipRuntimeGetVersion reports it
// (major*10000000 + minor*100000 + patch): ROCm 5.2, the first release whose
// hipModuleLaunchKernel, graph and hiprtc calls all behave as this package expects.
const MinVersion = 50200000

// VersionError is a HIP runtime older than MinVersion.
type VersionError struct {
	Library string
	Version int // hipRuntimeGetVersion's answer
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("amd: %s is HIP %s (%d); cubehip needs ROCm %s or newer",
		e.Library, versionString(e.Version), e.Version, versionString(MinVersion)[:3])
}

func versionString(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/10000000, v/100000%100, v%100000)
}

// library is an opened HIP runtime: its symbols, its version and, resolved on first
// use, what hiprtc needs from around it.
type library struct {
	hip     *dl.Library
	path    string // the file the loader chose, e.g. /opt/rocm-6.2.0/lib/libamdhip64.so.6
	s       syms
	version int

	rtc    *rtcSyms
	rtcErr error // why hiprtc is unavailable, when rtc is nil

	isaOnce sync.Once
	isas    []string
	isaErr  error
}

// loaded caches the default library per environment, so the platform and ahead-of-time
// compiles share one dlopen; a failure is not cached, so installing ROCm and retrying works.
var loaded struct {
	sync.Mutex
	key string
	lib *library
}

func loadDefault() (*library, error) {
	names := libraryNames()
	if env := os.Getenv(EnvLibrary); env != "" {
		names = []string{env}
	}
	var rtcNames []string
	if env := os.Getenv(EnvHIPRTC); env != "" {
		rtcNames = []string{env}
	}
	key := fmt.Sprint(names, rtcNames)
	loaded.Lock()
	defer loaded.Unlock()
	if loaded.lib != nil && loaded.key == key {
		return loaded.lib, nil
	}
	lib, err := load(names, rtcNames)
	if err != nil {
		return nil, err
	}
	loaded.key, loaded.lib = key, lib
	return lib, nil
}

// load opens the first of names, resolves every required symbol, checks the version and
// looks for hiprtc (rtcNames, or the usual names when empty). The errors name what is
// missing: the library and the names tried, every absent symbol, or the version found.
func load(names, rtcNames []string) (*library, error) {
	hip, err := dl.Open(names...)
	if err != nil {
		return nil, fmt.Errorf("amd: %w", err)
	}
	l := &library{hip: hip}
	if err := l.s.resolve(hip); err != nil {
		return nil, fmt.Errorf("amd: %s is not a usable HIP runtime: %w", hip.Name, err)
	}
	var v C.int
	if r := C.amdt_int_p(l.s.runtimeGetVersion, &v); r != 0 {
		return nil, fmt.Errorf("amd: %s: hipRuntimeGetVersion failed: %w", hip.Name, hipStatus(r))
	}
	l.version = int(v)
	if l.version < MinVersion {
		return nil, &VersionError{Library: hip.Name, Version: l.version}
	}
	var buf [4096]C.char
	// SAFETY: buf is a Go array passed for the duration of the call; c_lib_path writes at
	// most len(buf) bytes including the terminating NUL.
	if C.amdt_lib_path(l.s.getDeviceCount, &buf[0], C.size_t(len(buf))) == 0 {
		l.path = C.GoString(&buf[0])
	}
	l.rtc, l.rtcErr = l.findRTC(rtcNames)
	return l, nil
}

// dir is the directory the runtime was loaded from ("" when the loader did not say).
func (l *library) dir() string {
	if l.path == "" {
		return ""
	}
	return filepath.Dir(l.path)
}

func (l *library) major() int { return l.version / 10000000 }

// findRTC resolves hiprtc. From ROCm 6.0 it lives in libhiprtc.so.N (N the HIP major);
// before that libamdhip64 exports it too. A hiprtc of another ROCm than the runtime would
// compile for a different code-object version, so the runtime's own directory and major
// come first.
func (l *library) findRTC(names []string) (*rtcSyms, error) {
	if len(names) == 0 {
		major := "libhiprtc.so." + strconv.Itoa(l.major())
		if d := l.dir(); d != "" {
			names = append(names, filepath.Join(d, major), filepath.Join(d, "libhiprtc.so"))
		}
		names = append(names, major, "libhiprtc.so")
	}
	r := &rtcSyms{}
	lib, openErr := dl.Open(names...)
	if openErr == nil {
		if err := lib.Resolve(r.entries()); err != nil {
			return nil, fmt.Errorf("hiprtc: %s is not a usable hiprtc: %w", lib.Name, err)
		}
		r.identify(lib)
		return r, nil
	}
	if len(names) == 1 && os.Getenv(EnvHIPRTC) != "" {
		return nil, fmt.Errorf("hiprtc: %w", openErr)
	}
	if err := l.hip.Resolve(r.entries()); err != nil {
		return nil, fmt.Errorf("hiprtc not available: %w; nor does %s carry it: %w", openErr, l.hip.Name, err)
	}
	r.identify(l.hip)
	return r, nil
}

// identify records which hiprtc r's calls came from: the library's name and file, and
// hiprtcVersion where it has one (every ROCm cubehip supports does; it is looked up, not
// required, so that a hiprtc without it still compiles). They are part of the code
// identity: another hiprtc builds other code from the same program.
func (r *rtcSyms) identify(lib *dl.Library) {
	r.lib, r.major, r.minor = lib.Name, -1, -1
	var buf [4096]C.char
	// SAFETY: buf is a Go array passed for the duration of the call; amdt_lib_path writes
	// at most len(buf) bytes including the terminating NUL.
	if C.amdt_lib_path(r.compile, &buf[0], C.size_t(len(buf))) == 0 {
		r.path = C.GoString(&buf[0])
	}
	r.addName, r.lowered = lib.Lookup("hiprtcAddNameExpression"), lib.Lookup("hiprtcGetLoweredName")
	if f := lib.Lookup("hiprtcVersion"); f != nil {
		var major, minor C.int
		if C.amdt_rtc_version(f, &major, &minor) == 0 {
			r.major, r.minor = int(major), int(minor)
		}
	}
}
