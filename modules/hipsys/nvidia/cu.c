// Storage for cu.h's declarations: one definition per process, shared by every Go file
// of the package whose preamble includes cu.h.
#include "cu.h"

struct cubehip_cu cubehip_cu;
CUcontext cubehip_primary[CUBEHIP_MAX_DEVICES];
__thread int cubehip_tls_dev;
__thread CUcontext cubehip_tls_ctx;
cubehip_queue* cubehip_queues[CUBEHIP_MAX_DEVICES];

#include "nvrtc.h"

struct cubehip_nvrtc cubehip_nvrtc;
