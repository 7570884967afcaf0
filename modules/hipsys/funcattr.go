package hipsys

import "strconv"

// FuncAttribute is a kernel function's attribute, numbered as HIP's hipFunction_attribute
// (HIP_FUNC_ATTRIBUTE_*), which is CUDA's CUfunction_attribute numbering too, so a value
// crosses every platform unchanged.
type FuncAttribute int32

const (
	FuncAttributeMaxThreadsPerBlock            FuncAttribute = 0 // the largest block the kernel can launch with
	FuncAttributeSharedSizeBytes               FuncAttribute = 1 // the kernel's static shared memory
	FuncAttributeConstSizeBytes                FuncAttribute = 2 // constant memory the kernel uses
	FuncAttributeLocalSizeBytes                FuncAttribute = 3 // local (private) memory per thread
	FuncAttributeNumRegs                       FuncAttribute = 4 // registers per thread
	FuncAttributePTXVersion                    FuncAttribute = 5 // the virtual architecture it was compiled for (major*10+minor)
	FuncAttributeBinaryVersion                 FuncAttribute = 6 // the architecture of its binary (major*10+minor)
	FuncAttributeCacheModeCA                   FuncAttribute = 7 // 1 if compiled to cache global loads in L1
	FuncAttributeMaxDynamicSharedSizeBytes     FuncAttribute = 8 // dynamic shared memory a launch may ask for (settable)
	FuncAttributePreferredSharedMemoryCarveout FuncAttribute = 9 // percent of L1 preferred as shared memory, -1 for no preference (settable)
	funcAttributeCount                         FuncAttribute = 10
)

var funcAttributeNames = [funcAttributeCount]string{
	"MAX_THREADS_PER_BLOCK", "SHARED_SIZE_BYTES", "CONST_SIZE_BYTES", "LOCAL_SIZE_BYTES", "NUM_REGS",
	"PTX_VERSION", "BINARY_VERSION", "CACHE_MODE_CA", "MAX_DYNAMIC_SHARED_SIZE_BYTES", "PREFERRED_SHARED_MEMORY_CARVEOUT",
}

// Valid reports whether a is one of the attributes above.
func (a FuncAttribute) Valid() bool { return a >= 0 && a < funcAttributeCount }

// Settable reports whether FuncSetAttribute takes a: only the dynamic shared-memory limit
// and the carveout preference, as in HIP and CUDA.
func (a FuncAttribute) Settable() bool {
	return a == FuncAttributeMaxDynamicSharedSizeBytes || a == FuncAttributePreferredSharedMemoryCarveout
}

// String is HIP's name for a, without the HIP_FUNC_ATTRIBUTE_ prefix.
func (a FuncAttribute) String() string {
	if a.Valid() {
		return funcAttributeNames[a]
	}
	return "FuncAttribute(" + strconv.Itoa(int(a)) + ")"
}

// CheckFuncSetAttribute is the check every platform makes on a FuncSetAttribute before it
// asks the device: an attribute that cannot be set, or a value out of its range (a
// negative limit, a carveout outside -1..100), is hipErrorInvalidValue naming it.
// maxDynamic is the most dynamic shared memory the device can give the kernel.
func CheckFuncSetAttribute(platform string, attr FuncAttribute, value int, maxDynamic uint64) error {
	const call = "hipFuncSetAttribute"
	switch attr {
	case FuncAttributeMaxDynamicSharedSizeBytes:
		if value < 0 || uint64(value) > maxDynamic {
			return NewError(platform, call, ErrorInvalidValue,
				"MAX_DYNAMIC_SHARED_SIZE_BYTES "+strconv.Itoa(value)+" is outside 0.."+strconv.FormatUint(maxDynamic, 10)+", the dynamic shared memory the device can give this kernel")
		}
	case FuncAttributePreferredSharedMemoryCarveout:
		if value < -1 || value > 100 {
			return NewError(platform, call, ErrorInvalidValue, "PREFERRED_SHARED_MEMORY_CARVEOUT "+strconv.Itoa(value)+" is outside -1..100")
		}
	default:
		return NewError(platform, call, ErrorInvalidValue, attr.String()+" cannot be set (only MAX_DYNAMIC_SHARED_SIZE_BYTES and PREFERRED_SHARED_MEMORY_CARVEOUT can)")
	}
	return nil
}
