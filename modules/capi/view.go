package main

/*
#include "capi.h"
*/
import "C"

import "fmt"

// span checks that [offset, offset+size) lies inside b, without overflow, before a read
// or write touches it: the host's numbers, refused with both of them named.
func span(b *buffer, offset, size C.uint64_t, call string) error {
	total := b.b.Size()
	off, n := uint64(offset), uint64(size)
	if off > total || n > total-off {
		return argError(fmt.Sprintf("%s: bytes [%d, %d+%d) are outside the buffer's %d", call, off, off, n, total))
	}
	return nil
}
