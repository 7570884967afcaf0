/* cubehip_warp.h: warps on the host.
 *
 * A block's threads form warps of warpSize lanes (32, or 64 when asked for) in linear
 * thread order, as on a GPU. In a module that calls any warp function the jit runs every
 * thread as a fiber (cubehip_entry.h): a warp function posts the lane's value and waits
 * until every lane of its warp still running has posted too, or waits at a block barrier;
 * then each lane computes its result from what the lanes posted. So a collective is one
 * of the lanes that reach it, and a lane that returned takes no part (its bit is clear in
 * __activemask() and __ballot(); a shuffle from it gives the caller's own value, as one
 * from a lane outside the width does). The mask of the _sync forms is not needed to know
 * who takes part and is ignored. Modules without warp functions run as before, and
 * warpSize is still the warp size there (a kernel may size shared arrays by it).
 *
 * Lanes that diverge to different warp functions are grouped into one collective: a GPU
 * with independent thread scheduling may do otherwise, which HIP leaves undefined. */
#pragma once

#if CUBEHIP_WARPS
namespace cubehip {
template <class T> inline uint64_t lane_bits(const T& v) {
	static_assert(sizeof(T) <= 8, "one lane's word");
	uint64_t b = 0;
	std::memcpy(&b, &v, sizeof v);
	return b;
}
template <class T> inline T from_lane_bits(uint64_t b) {
	T v;
	std::memcpy(static_cast<void*>(&v), &b, sizeof v);
	return v;
}
/* Each lane reads the value lane pick(lane) posted, or keeps its own when pick gives -1 or a
 * lane that took no part. Values over 8 bytes go through in 8-byte pieces. */
template <class T, class Pick> inline T shuffle(T v, Pick pick) {
	static_assert(std::is_trivially_copyable<T>::value, "shuffled values must be trivially copyable");
	if constexpr (sizeof(T) > 8) {
		T r;
		unsigned char* out = reinterpret_cast<unsigned char*>(&r);
		const unsigned char* in = reinterpret_cast<const unsigned char*>(&v);
		for (size_t o = 0; o < sizeof(T); o += 8) {
			const size_t k = sizeof(T) - o < 8 ? sizeof(T) - o : 8;
			uint64_t piece = 0;
			std::memcpy(&piece, in + o, k);
			piece = shuffle(piece, pick);
			std::memcpy(out + o, &piece, k);
		}
		return r;
	} else {
		unsigned lane, half;
		warp_state* ws = warp_post(lane_bits(v), &lane, &half);
		if (ws == nullptr) return v;
		const int s = pick(int(lane));
		if (s < 0 || s >= CUBEHIP_WARP_SIZE || !((ws->mask[half] >> s) & 1)) return v;
		return from_lane_bits<T>(ws->val[half][s]);
	}
}
/* Runs a collective on one word per lane and hands f the lanes that took part and their
 * words; f's result is the caller's. */
template <class F> inline auto collective(uint64_t v, F f) {
	unsigned lane, half;
	warp_state* ws = warp_post(v, &lane, &half);
	if (ws == nullptr) {
		const uint64_t one[1] = {v};
		return f(1ull, one, 0u);
	}
	return f(ws->mask[half], static_cast<const uint64_t*>(ws->val[half]), lane);
}
inline uint64_t ballot(int pred) {
	return collective(pred != 0, [](uint64_t mask, const uint64_t* val, unsigned) {
		uint64_t r = 0;
		for (unsigned l = 0; l < CUBEHIP_WARP_SIZE; l++)
			if (((mask >> l) & 1) && val[l]) r |= 1ull << l;
		return r;
	});
}
} // namespace cubehip

/* Shuffles: width (a power of two up to warpSize) splits the warp into segments; a source
 * outside the caller's segment leaves the caller's value. */
template <class T> inline T __shfl(T v, int src, int width = warpSize) {
	return cubehip::shuffle(v, [=](int l) { return (l & ~(width - 1)) + (src & (width - 1)); });
}
template <class T> inline T __shfl_up(T v, unsigned delta, int width = warpSize) {
	return cubehip::shuffle(v, [=](int l) { return (l & (width - 1)) >= int(delta) ? l - int(delta) : -1; });
}
template <class T> inline T __shfl_down(T v, unsigned delta, int width = warpSize) {
	return cubehip::shuffle(v, [=](int l) { return (l & (width - 1)) + int(delta) < width ? l + int(delta) : -1; });
}
template <class T> inline T __shfl_xor(T v, int mask, int width = warpSize) {
	return cubehip::shuffle(v, [=](int l) { const int s = l ^ mask; return s < ((l + width) & ~(width - 1)) ? s : -1; });
}
template <class M, class T> inline T __shfl_sync(M, T v, int src, int width = warpSize) { return __shfl(v, src, width); }
template <class M, class T> inline T __shfl_up_sync(M, T v, unsigned d, int width = warpSize) { return __shfl_up(v, d, width); }
template <class M, class T> inline T __shfl_down_sync(M, T v, unsigned d, int width = warpSize) { return __shfl_down(v, d, width); }
template <class M, class T> inline T __shfl_xor_sync(M, T v, int m, int width = warpSize) { return __shfl_xor(v, m, width); }

/* Votes. */
inline unsigned long long __ballot(int pred) { return cubehip::ballot(pred); }
inline int __any(int pred) { return cubehip::ballot(pred) != 0; }
inline int __all(int pred) {
	return cubehip::collective(pred != 0, [](uint64_t mask, const uint64_t* val, unsigned) {
		for (unsigned l = 0; l < CUBEHIP_WARP_SIZE; l++)
			if (((mask >> l) & 1) && !val[l]) return 0;
		return 1;
	});
}
inline unsigned long long __activemask() {
	return cubehip::collective(0, [](uint64_t mask, const uint64_t*, unsigned) { return mask; });
}
template <class M> inline unsigned long long __ballot_sync(M, int pred) { return __ballot(pred); }
template <class M> inline int __any_sync(M, int pred) { return __any(pred); }
template <class M> inline int __all_sync(M, int pred) { return __all(pred); }
template <class M> inline unsigned __uni_sync(M, int pred) {
	return cubehip::collective(pred != 0, [](uint64_t mask, const uint64_t* val, unsigned) {
		bool first = true, v0 = false;
		for (unsigned l = 0; l < CUBEHIP_WARP_SIZE; l++)
			if ((mask >> l) & 1) {
				if (first) v0 = val[l], first = false;
				else if (bool(val[l]) != v0) return 0u;
			}
		return 1u;
	});
}
inline void __syncwarp() { (void)__activemask(); }
template <class M> inline void __syncwarp(M) { (void)__activemask(); }
inline unsigned __lane_id() { return cubehip::lane_id(); }

/* Warp reductions over the lanes that take part (CUDA's __reduce_*_sync). */
#define CUBEHIP_WARP_REDUCE(name, T, init, op)                                                       \
	template <class M> inline T name(M, T v) {                                                       \
		return cubehip::collective(cubehip::lane_bits(v), [](uint64_t mask, const uint64_t* val, unsigned) { \
			T r = init;                                                                              \
			for (unsigned l = 0; l < CUBEHIP_WARP_SIZE; l++)                                         \
				if ((mask >> l) & 1) {                                                               \
					const T x = cubehip::from_lane_bits<T>(val[l]);                                  \
					r = op;                                                                          \
				}                                                                                    \
			return r;                                                                                \
		});                                                                                          \
	}
CUBEHIP_WARP_REDUCE(__reduce_add_sync, unsigned, 0u, r + x)
CUBEHIP_WARP_REDUCE(__reduce_add_sync, int, 0, int(unsigned(r) + unsigned(x)))
CUBEHIP_WARP_REDUCE(__reduce_min_sync, unsigned, ~0u, x < r ? x : r)
CUBEHIP_WARP_REDUCE(__reduce_min_sync, int, INT_MAX, x < r ? x : r)
CUBEHIP_WARP_REDUCE(__reduce_max_sync, unsigned, 0u, x > r ? x : r)
CUBEHIP_WARP_REDUCE(__reduce_max_sync, int, INT_MIN, x > r ? x : r)
CUBEHIP_WARP_REDUCE(__reduce_and_sync, unsigned, ~0u, r & x)
CUBEHIP_WARP_REDUCE(__reduce_or_sync, unsigned, 0u, r | x)
CUBEHIP_WARP_REDUCE(__reduce_xor_sync, unsigned, 0u, r ^ x)
#undef CUBEHIP_WARP_REDUCE

/* Matches: the lanes whose value equals the caller's. */
template <class M, class T> inline unsigned long long __match_any_sync(M, T v) {
	return cubehip::collective(cubehip::lane_bits(v), [](uint64_t mask, const uint64_t* val, unsigned lane) {
		uint64_t r = 0;
		for (unsigned l = 0; l < CUBEHIP_WARP_SIZE; l++)
			if (((mask >> l) & 1) && val[l] == val[lane]) r |= 1ull << l;
		return r;
	});
}
template <class M, class T> inline unsigned long long __match_all_sync(M, T v, int* pred) {
	const uint64_t same = __match_any_sync(0, v);
	const uint64_t all = __activemask();
	*pred = same == all;
	return same == all ? all : 0;
}
#else
/* The jit found no warp function in the source, so the module's threads do not run as
 * warps; a call reached through a header it could not read is an error at compile time
 * rather than a silently one-lane result. */
#define CUBEHIP_NO_WARPS                                                                                         \
	__attribute__((error("warp functions need the jit to see one named in the kernel source or its in-memory " \
	                     "headers (this call comes from elsewhere, e.g. an -I directory)")))
namespace cubehip {
CUBEHIP_NO_WARPS unsigned long long warps_unavailable();
}
template <class T> inline T __shfl(T v, int, int = warpSize) { return cubehip::warps_unavailable(), v; }
template <class T> inline T __shfl_up(T v, unsigned, int = warpSize) { return cubehip::warps_unavailable(), v; }
template <class T> inline T __shfl_down(T v, unsigned, int = warpSize) { return cubehip::warps_unavailable(), v; }
template <class T> inline T __shfl_xor(T v, int, int = warpSize) { return cubehip::warps_unavailable(), v; }
template <class M, class T> inline T __shfl_sync(M, T v, int, int = warpSize) { return cubehip::warps_unavailable(), v; }
template <class M, class T> inline T __shfl_up_sync(M, T v, unsigned, int = warpSize) { return cubehip::warps_unavailable(), v; }
template <class M, class T> inline T __shfl_down_sync(M, T v, unsigned, int = warpSize) { return cubehip::warps_unavailable(), v; }
template <class M, class T> inline T __shfl_xor_sync(M, T v, int, int = warpSize) { return cubehip::warps_unavailable(), v; }
inline unsigned long long __ballot(int) { return cubehip::warps_unavailable(); }
inline int __any(int) { return int(cubehip::warps_unavailable()); }
inline int __all(int) { return int(cubehip::warps_unavailable()); }
inline unsigned long long __activemask() { return cubehip::warps_unavailable(); }
template <class M> inline unsigned long long __ballot_sync(M, int) { return cubehip::warps_unavailable(); }
template <class M> inline int __any_sync(M, int) { return int(cubehip::warps_unavailable()); }
template <class M> inline int __all_sync(M, int) { return int(cubehip::warps_unavailable()); }
inline void __syncwarp() { cubehip::warps_unavailable(); }
template <class M> inline void __syncwarp(M) { cubehip::warps_unavailable(); }
inline unsigned __lane_id() { return unsigned(cubehip::warps_unavailable()); }
#undef CUBEHIP_NO_WARPS
#endif
