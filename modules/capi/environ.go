package main

/*
#include <stdlib.h>
extern char** environ;

// capi_environ_at is the i-th "NAME=value" of the process environment as it is now,
// NULL past its end.
static const char* capi_environ_at(size_t i) { return environ ? environ[i] : NULL; }
*/
import "C"

import (
	"os"
	"strings"
	"sync"
)

// The Go runtime of a c-shared library copies the process environment once, from what
// the process started with (the strings after argv), not from the C library's environ.
// A host that sets a variable before loading or using the library (Python's os.environ,
// C's setenv) would otherwise set it for everything in the process but cubehip: a
// CUBEHIP_CACHE_DIR, CUBEHIP_LOG or CUBEHIP_TRACE set in a script's first lines would be
// silently ignored. So the library takes the environment from environ when it is
// loaded and again at every device open, the call that reads most of the variables
// (the cache, the log, the trace, the cpu device's settings).

var environMu sync.Mutex

// syncEnviron makes Go's environment the process's current one: set or changed
// variables take their C value, and a variable the host has unset goes.
func syncEnviron() {
	environMu.Lock()
	defer environMu.Unlock()
	now := map[string]string{}
	for i := C.size_t(0); ; i++ {
		p := C.capi_environ_at(i)
		if p == nil {
			break
		}
		kv := C.GoString(p)
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			now[k] = v
		}
	}
	for _, kv := range os.Environ() {
		if k, _, ok := strings.Cut(kv, "="); ok && k != "" {
			if _, still := now[k]; !still {
				_ = os.Unsetenv(k)
			}
		}
	}
	for k, v := range now {
		if old, ok := os.LookupEnv(k); !ok || old != v {
			_ = os.Setenv(k, v)
		}
	}
}

func init() { syncEnviron() }
