/* hip/hip_runtime.h on the cubehip cpu platform: the prelude is the whole device side. */
#pragma once
#include "cubehip_prelude.h"
