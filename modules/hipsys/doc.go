// Package hipsys is the HIP API as Go: HIP's runtime, module, graph and hiprtc calls
// behind one interface, Platform, with HIP's own status codes (Status, RTCStatus) as the
// error vocabulary of every platform.
//
// Three platforms implement it, each in its own package, and register themselves with
// Register when imported:
//
//	amd     ROCm's libamdhip64 and hiprtc, loaded at run time (package amd)
//	nvidia  HIP's NVIDIA mapping onto the CUDA driver API and NVRTC, in Go (package nvidia)
//	cpu     an embedded HIP device made of the host (package cpu), always available
//
// Import package platforms to register all three, then Open("auto") picks amd if it has
// a device, else nvidia, else cpu ($CUBEHIP_PLATFORM overrides). Package faults wraps
// any platform to make chosen calls fail; package conformance is the one test suite
// every platform passes.
//
// Nothing is linked at build time: vendor libraries are opened with dlopen (package dl)
// when their platform is opened, so a build needs Go and a C compiler only, and one
// binary runs across ROCm and CUDA releases.
//
// Errors are *Error values naming the platform, the HIP call and HIP's status; test
// them with errors.Is(err, hipsys.ErrorNotReady) and friends. No call panics on bad
// input. As in HIP, the current device belongs to the calling OS thread.
//
// One capability goes beyond HIP: a launch queue (LaunchQueuer, LaunchQueue; the nvidia
// platform has one), a platform thread that issues a holder's launches so that a launch
// loop runs at the driver's rate while the caller's Go work overlaps it. It keeps HIP's
// order (every other call first waits for the queued launches to be issued) and changes
// when a queued launch's failure is known: later, from a Launch or a Settle, numbered.
// While no queue is held, a call pays one pointer read for it. queue.go states the
// contract in full. A queue may also flag a launch (FlaggingQueue, with the platform's
// FlagWaiter): the stream writes a word of host memory right after the launch, and a
// wait that spins on it sees the launch done sooner than StreamSynchronize would
// (flags.go). Another optional interface, SmallReadStager, tells the layers above how the
// platform's small reads are fastest. Package paired is the method cubehip's benchmarks
// hold a path to its raw anchor with.
package hipsys
