package hipsys

import (
	"encoding/binary"
	"fmt"
	"math"
)

// KernelArgs packs a kernel's parameters by value, each at its natural alignment, the
// way a compiler lays out a kernel's parameter block. A platform turns it into HIP's
// kernelParams (one pointer per argument, into Buffer at Offsets[i]); the pointers are
// built on the C side, so no Go pointer to Go memory ever crosses into C.
//
// A KernelArgs is reused across launches (Reset keeps its capacity), which is how a
// steady stream of launches allocates nothing. It is not safe for concurrent use; a
// platform is done with it when ModuleLaunchKernel returns.
type KernelArgs struct {
	buf   []byte
	offs  []uint32
	sizes []uint32
}

// Reset empties the list, keeping its storage.
func (a *KernelArgs) Reset() *KernelArgs {
	a.buf = a.buf[:0]
	a.offs = a.offs[:0]
	a.sizes = a.sizes[:0]
	return a
}

// Len is the number of arguments.
func (a *KernelArgs) Len() int { return len(a.offs) }

// Buffer is the packed parameter block.
func (a *KernelArgs) Buffer() []byte { return a.buf }

// Offsets holds each argument's offset in Buffer, in order.
func (a *KernelArgs) Offsets() []uint32 { return a.offs }

// Sizes holds each argument's size in bytes, in order: what a platform compares with
// the kernel's parameters (an I64 where the kernel takes an int is 8 bytes against 4).
func (a *KernelArgs) Sizes() []uint32 { return a.sizes }

// place reserves size bytes at the given alignment and returns them.
func (a *KernelArgs) place(size, align int) []byte {
	off := (len(a.buf) + align - 1) &^ (align - 1)
	for len(a.buf) < off+size {
		a.buf = append(a.buf, 0)
	}
	a.offs = append(a.offs, uint32(off))
	a.sizes = append(a.sizes, uint32(size))
	return a.buf[off : off+size]
}

// Ptr appends a device pointer (a buffer argument).
func (a *KernelArgs) Ptr(p DevicePtr) *KernelArgs { return a.U64(uint64(p)) }

// U32 appends a 32-bit unsigned scalar.
func (a *KernelArgs) U32(v uint32) *KernelArgs {
	binary.LittleEndian.PutUint32(a.place(4, 4), v)
	return a
}

// I32 appends a 32-bit signed scalar (a C int).
func (a *KernelArgs) I32(v int32) *KernelArgs { return a.U32(uint32(v)) }

// U64 appends a 64-bit unsigned scalar.
func (a *KernelArgs) U64(v uint64) *KernelArgs {
	binary.LittleEndian.PutUint64(a.place(8, 8), v)
	return a
}

// I64 appends a 64-bit signed scalar.
func (a *KernelArgs) I64(v int64) *KernelArgs { return a.U64(uint64(v)) }

// F32 appends a float.
func (a *KernelArgs) F32(v float32) *KernelArgs { return a.U32(math.Float32bits(v)) }

// F64 appends a double.
func (a *KernelArgs) F64(v float64) *KernelArgs { return a.U64(math.Float64bits(v)) }

// Raw appends a by-value struct: its bytes as the kernel's C layout has them, at the
// given alignment (a power of two).
func (a *KernelArgs) Raw(b []byte, align int) *KernelArgs {
	if align < 1 || align&(align-1) != 0 {
		align = 8
	}
	copy(a.place(len(b), align), b)
	return a
}

// CheckArgs compares a launch's arguments with the parameter sizes of the kernel named
// kernel, in declaration order, as its platform knows them. Every platform runs it
// before anything is launched or queued, because a launch never learns the count
// otherwise: the driver reads as many argument pointers as the kernel has parameters,
// so a list one short has it read past the list (on NVIDIA, a crash of the process),
// and a scalar of the wrong width (an I64 where the kernel takes an int) shifts every
// argument after it. A mismatch is hipErrorInvalidValue from hipModuleLaunchKernel,
// naming the kernel, the argument and what the parameter takes; nil args are no
// arguments. It loops over the sizes and allocates nothing unless they differ.
func CheckArgs(platform, kernel string, want []uint32, args *KernelArgs) error {
	if args.SizesMatch(want) {
		return nil
	}
	return argsMismatch(platform, kernel, want, args)
}

// SizesMatch reports whether the arguments' sizes are want, in number and order (nil
// args are none): CheckArgs' answer without the error, small enough for the compiler to
// inline, for a platform to test on each launch before it calls CheckArgs for the error.
func (a *KernelArgs) SizesMatch(want []uint32) bool {
	var got []uint32
	if a != nil {
		got = a.sizes
	}
	if len(got) != len(want) {
		return false
	}
	for i, n := range want {
		if got[i] != n {
			return false
		}
	}
	return true
}

// argsMismatch is the error of arguments that do not match want.
func argsMismatch(platform, kernel string, want []uint32, args *KernelArgs) error {
	var got []uint32
	if args != nil {
		got = args.sizes
	}
	if len(got) != len(want) {
		return argsError(platform, fmt.Sprintf("kernel %s takes %d arguments, got %d", kernel, len(want), len(got)))
	}
	for i, n := range want {
		if got[i] != n {
			return argsError(platform, fmt.Sprintf("argument %d of kernel %s is %d bytes; the parameter takes %d", i, kernel, got[i], n))
		}
	}
	return nil
}

func argsError(platform, detail string) error {
	return NewError(platform, "hipModuleLaunchKernel", ErrorInvalidValue, detail)
}

// ParamSizes is each parameter's size, in order: what CheckArgs compares a launch with.
func ParamSizes(params []KernelParam) []uint32 {
	sizes := make([]uint32, len(params))
	for i, p := range params {
		sizes[i] = p.Size
	}
	return sizes
}
