/* hip/hip_complex.h on the cubehip cpu platform (cubehip_complex.h). */
#pragma once
#include "cubehip_prelude.h"
#include "cubehip_complex.h"
