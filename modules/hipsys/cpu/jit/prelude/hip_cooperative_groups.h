/* hip/hip_cooperative_groups.h on the cubehip cpu platform (cubehip_cg.h). */
#pragma once
#include "cubehip_prelude.h"
#include "cubehip_cg.h"
