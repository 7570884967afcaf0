//go:build !linux

package compute

import "runtime"

// yield gives the core to any other runnable goroutine before a copy team's poll goes on.
func yield() { runtime.Gosched() }
