/* <stddef.h> for hiprtc before ROCm 6.1: the system's would need the compiler's own
 * header directory, which hiprtc does not search (its built-in preamble has size_t). */
#pragma once
typedef decltype((char*)0 - (char*)0) ptrdiff_t;
typedef decltype(nullptr) nullptr_t;
typedef struct { long long __ll; long double __ld; } max_align_t;
#ifndef NULL
#define NULL __null
#endif
#define offsetof(type, member) __builtin_offsetof(type, member)
