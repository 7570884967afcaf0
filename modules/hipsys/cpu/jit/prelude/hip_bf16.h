/* hip/hip_bf16.h and hip/hip_bfloat16.h on the cubehip cpu platform: bfloat16 (cubehip_bf16.h). */
#pragma once
#include "cubehip_prelude.h"
#include "cubehip_bf16.h"
