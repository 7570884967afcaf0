// The layout of HIP's vector types and of structs holding them, as the device compiler
// sees it: each TYPE line writes sizeof and alignof, each FIELD line a member's offset,
// in order. The suite's table (layout.go) holds every platform to what HIP's headers give,
// so a struct or array shared between host code and a kernel, or between two platforms,
// has the same bytes in the same places.
#include <hip/hip_runtime.h>

struct IntUint2 { int a; uint2 b; };
struct CharShort2 { char a; short2 b; };
struct CharFloat3 { char a; float3 b; };
struct CharFloat4 { char a; float4 b; };
struct FloatDouble2 { float a; double2 b; };
struct CharDouble3 { char a; double3 b; };
struct CharDouble4 { char a; double4 b; };

#define TYPE(t) out[i++] = sizeof(t); out[i++] = alignof(t);
// The member's distance from its struct's start, measured on a value: offsetof would need
// <cstddef>, which NVRTC has not.
#define FIELD(s, f) { s v; out[i++] = (unsigned long long)((const char*)&v.f - (const char*)&v); }

extern "C" __global__ void layout(unsigned long long* out) {
    int i = 0;
    TYPE(char1) TYPE(char2) TYPE(char3) TYPE(char4)
    TYPE(uchar1) TYPE(uchar2) TYPE(uchar3) TYPE(uchar4)
    TYPE(short1) TYPE(short2) TYPE(short3) TYPE(short4)
    TYPE(ushort1) TYPE(ushort2) TYPE(ushort3) TYPE(ushort4)
    TYPE(int1) TYPE(int2) TYPE(int3) TYPE(int4)
    TYPE(uint1) TYPE(uint2) TYPE(uint3) TYPE(uint4)
    TYPE(long1) TYPE(long2) TYPE(long3) TYPE(long4)
    TYPE(ulong1) TYPE(ulong2) TYPE(ulong3) TYPE(ulong4)
    TYPE(longlong1) TYPE(longlong2) TYPE(longlong3) TYPE(longlong4)
    TYPE(ulonglong1) TYPE(ulonglong2) TYPE(ulonglong3) TYPE(ulonglong4)
    TYPE(float1) TYPE(float2) TYPE(float3) TYPE(float4)
    TYPE(double1) TYPE(double2) TYPE(double3) TYPE(double4)
    TYPE(IntUint2) FIELD(IntUint2, b)
    TYPE(CharShort2) FIELD(CharShort2, b)
    TYPE(CharFloat3) FIELD(CharFloat3, b)
    TYPE(CharFloat4) FIELD(CharFloat4, b)
    TYPE(FloatDouble2) FIELD(FloatDouble2, b)
    TYPE(CharDouble3) FIELD(CharDouble3, b)
    TYPE(CharDouble4) FIELD(CharDouble4, b)
}
