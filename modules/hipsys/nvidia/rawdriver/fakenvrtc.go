package rawdriver

// #include "rawdriver.h"
import "C"

import "unsafe"

// FakeAddNameEntry is the fake nvrtcAddNameExpression's address: it records the
// program's expression (at most 32 in all until FakeNamesReset).
func FakeAddNameEntry() unsafe.Pointer { return C.rawd_fake_add_name_entry() }

// FakeLoweredNameEntry is the fake nvrtcGetLoweredName's address: a recorded
// expression's lowered name is "lowered:" followed by it; any other is
// NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID.
func FakeLoweredNameEntry() unsafe.Pointer { return C.rawd_fake_lowered_entry() }

// FakeNamesReset forgets the recorded expressions.
func FakeNamesReset() { C.rawd_fake_names_reset() }
