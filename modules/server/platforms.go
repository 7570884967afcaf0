//go:build !cubehip_noplatforms

package server

// Every platform (amd, nvidia, cpu) is registered by importing server, so that Open
// works with this import alone. A program that wants a smaller binary, or only some
// platforms, builds with the tag cubehip_noplatforms and imports the platform packages
// it wants for their side effect (github.com/cubehip/cubehip/modules/hipsys/cpu, .../amd,
// .../nvidia), or opens a platform itself and passes it to OpenPlatform.
import _ "github.com/cubehip/cubehip/modules/hipsys/platforms"
