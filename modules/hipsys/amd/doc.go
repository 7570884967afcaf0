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
// Handles and addresses are checked against those the platform gave out before they
// reach ROCm, which dereferences whatever it is given; hiprtc's options depend on the
// ROCm release. [Platform] says how.
//
// CompileFor, ParseCodeObject, CheckCodeObject, KernelParams and SupportedArchs work
// with AMD code objects on a machine with no GPU (each says how); FuncGetParams answers
// from the metadata of the loaded code object, since ROCm has no call that lists a
// kernel's parameters. EnvLibrary and EnvHIPRTC point the package at a ROCm install.
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
