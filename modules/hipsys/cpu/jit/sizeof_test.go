package jit_test

import "unsafe"

func sizeOf[T any](v T) uintptr { return unsafe.Sizeof(v) }
