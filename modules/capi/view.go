package main

/*
#include "capi.h"
*/
import "C"

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/server"
)

// view is the part [offset, offset+size) of b that a read or write touches, checked
// against b's size without overflow.
func view(b *buffer, offset, size C.uint64_t, call string) (*server.Buffer, error) {
	total := b.b.Size()
	off, n := uint64(offset), uint64(size)
	if off > total || n > total-off {
		return nil, argError(fmt.Sprintf("%s: bytes [%d, %d+%d) are outside the buffer's %d", call, off, off, n, total))
	}
	if off != 0 || n != total {
		return nil, argError(fmt.Sprintf("%s: a part of a buffer (offset %d, %d of %d bytes) needs buffer views", call, off, n, total))
	}
	return b.b, nil
}
