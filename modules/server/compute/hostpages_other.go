//go:build !linux

package compute

// adviseFresh does nothing where the kernel's huge-page advice is not Linux's.
func adviseFresh([]byte) {}
