package server_test

import (
	"os"
	"testing"
)

// TestMain keeps the kernel caches (the server's and the cpu compiler's) in one
// temporary directory per run, so tests neither read nor leave a user's cache.
func TestMain(m *testing.M) {
	if os.Getenv("CUBEHIP_CACHE_DIR") == "" {
		dir, err := os.MkdirTemp("", "cubehip-server-test-")
		if err != nil {
			panic(err)
		}
		os.Setenv("CUBEHIP_CACHE_DIR", dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}
