// Package amd is the hipsys platform over ROCm: libamdhip64 and hiprtc, opened at run
// time with dlopen, so a cubehip build needs only Go and a C compiler and one binary runs
// on ROCm 5.2 through 7.x. Importing the package registers it as "amd" with hipsys;
// hipsys.Open("amd") (or "auto", which picks amd when it has a GPU) opens it.
//
// # What it owns
//
// Every hipsys.Platform call maps to the HIP call of the same name, resolved by name
// when the platform opens (see symbols.go; where ROCm renamed a call, such as
// hipGetDevicePropertiesR0600, the newer name is tried first). Opening fails with an
// error that names what is missing: the library and the names tried, every absent
// symbol at once, or a runtime older than MinVersion (a *VersionError). Opening succeeds
// without a GPU; GetDeviceCount then returns HIP's hipErrorNoDevice with the likely
// reason (no /dev/kfd, a *_VISIBLE_DEVICES variable, ...).
//
// Before a handle or address reaches ROCm it is checked against those this Platform
// gave out: ROCm dereferences whatever it is given, so an invented stream or a copy past
// the end of an allocation would crash the process. They are hipErrorInvalidHandle and
// hipErrorInvalidValue instead. A pitched copy's numbers are checked first with
// arithmetic that cannot wrap (hipsys.Copy2D.Check), so a pitch or height that overflows
// 64 bits cannot make a huge copy look small.
//
// hiprtc comes from libhiprtc.so.N (ROCm 6.0 on) or libamdhip64 itself (before). Compile
// options depend on the release: before 6.1 hiprtc needs -I with the HIP headers of its
// own ROCm, which the package finds from the library's location, $HIP_PATH, $ROCM_PATH,
// /opt/rocm or /usr/include; from 6.1 hiprtc has them built in. --offload-arch is the
// current device's gcnArchName unless the options name one, and it is checked against
// comgr's list of supported architectures first, because ROCm 5.x's hiprtc aborts the
// process on one it does not know.
//
// CompileFor compiles ahead of time for a named architecture with no GPU present;
// ParseCodeObject and CheckCodeObject read the result (an AMDGPU ELF, or a clang offload
// bundle holding one), and KernelParams its kernels' parameters from the code object's
// metadata note (a MessagePack map, decoded by msgpack.go). FuncGetParams answers from
// that metadata, read when ModuleLoadData loads the code object: ROCm has no call that
// lists a kernel's parameters. SupportedArchs lists the architectures the installed
// compiler supports. EnvLibrary and EnvHIPRTC point the package at a particular ROCm install.
//
// It deliberately does not retry, cache compiled code or pick devices: those belong to
// the layers above. Device properties the architecture implies are checked (the warp
// size: 64 on GCN and CDNA, 32 on RDNA) and a disagreement is logged, not hidden.
//
// # Concurrency
//
// Every method is safe for concurrent use. HIP's current device is per OS thread, as in
// HIP. hiprtc calls are serialized per library, because ROCm 5.2's hiprtc crashes when
// two programs compile at once.
//
// # Layering
//
// The package imports hipsys and hipsys/dl only. The cgo boundary is trampolines.c, one
// C function per call shape taking the resolved function pointer; no Go file includes a
// ROCm header.
package amd
