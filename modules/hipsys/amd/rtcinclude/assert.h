/* <assert.h> for hiprtc before ROCm 6.1: assert as HIP's device headers define it, on
 * the __assert_fail that hiprtc's built-in preamble holds (it prints the failed
 * condition and traps, failing the launch). No include guard: each inclusion follows
 * NDEBUG anew, as C says. */
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : __assert_fail(#e, __FILE__, __LINE__, __func__))
#endif
