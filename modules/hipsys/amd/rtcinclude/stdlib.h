/* <stdlib.h> for hiprtc before ROCm 6.1: malloc, free, abort and abs are declared by
 * hiprtc's built-in preamble for the device already. */
#pragma once
#include <stddef.h>
