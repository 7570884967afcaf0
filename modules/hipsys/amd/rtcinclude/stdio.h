/* <stdio.h> for hiprtc before ROCm 6.1: device printf is declared by hiprtc's built-in
 * preamble; the system's header would need the compiler's own header directory, which
 * hiprtc does not search. Kernels include it for printf alone. */
#pragma once
