/* hip/hip_fp16.h on the cubehip cpu platform: half precision (cubehip_fp16.h). */
#pragma once
#include "cubehip_prelude.h"
#include "cubehip_fp16.h"
