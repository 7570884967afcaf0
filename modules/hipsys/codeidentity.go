package hipsys

// CodeIdentifier is a Platform whose runtime compiler can name everything, besides the
// program itself, that decides the code RTCCompileProgram builds. A cache of compiled
// code keyed by a program's source, headers and options alone is stale as soon as any
// of those other inputs changes: another compiler or compiler version, other device
// headers, other flags the platform adds, another warp width. Such a cache keys on the
// identity too. It is optional: a cache has nothing sound to key on for a platform
// without it, and keeps no code for it across processes.
type CodeIdentifier interface {
	// CodeIdentity is a string that changes whenever RTCCompileProgram(prog, options),
	// for the calling thread's current device, could build different code from the same
	// program (source and headers): the compiler's identity and version, the headers and
	// flags the platform adds, the target. Two calls that return the same string build
	// the same code. It fails where compiling would fail before the compiler runs (no
	// compiler found, no device to target), with the same error.
	CodeIdentity(options []string) (string, error)
}
