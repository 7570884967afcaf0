/* <stdint.h> for hiprtc before ROCm 6.1, whose built-in preamble already defines the
 * fixed-width types (64 bits as long long): the system's header would define them again
 * as long and stop the compile. Only the limits are left to give. */
#pragma once
#define INT8_MIN (-128)
#define INT16_MIN (-32767 - 1)
#define INT32_MIN (-2147483647 - 1)
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615ULL
