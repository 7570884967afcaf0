/* cubehip_atomic.h: HIP's atomic functions on the host.
 *
 * Blocks run on several OS threads at once, so these are real atomic instructions
 * (relaxed, as GPU atomics are). HIP declares them as overloads for int, unsigned int,
 * unsigned long, unsigned long long (and float, double where it makes sense), and C++'s
 * usual conversions then apply to the value: atomicAdd(unsigned*, int) and
 * atomicExch(int*, unsigned) compile on a GPU. Here each is a template on the pointee type
 * T with the value taken as any arithmetic type and converted to T, which accepts the same
 * calls (a template on both as one T rejected them). Floating point goes through a
 * compare-and-swap loop on the bit pattern because the __atomic builtins take integers
 * only. The _system and _block variants are the same functions: host memory is coherent
 * for every thread, and one scope is as strong as another here. */
#pragma once

namespace cubehip {
template <class T> struct bits_of { using type = T; };
template <> struct bits_of<float> { using type = uint32_t; };
template <> struct bits_of<double> { using type = uint64_t; };

template <class T, class Op> inline T atomic_update(T* p, Op op) {
	using B = typename bits_of<T>::type;
	B* bp = reinterpret_cast<B*>(p);
	B old = __atomic_load_n(bp, __ATOMIC_RELAXED);
	for (;;) {
		T o;
		std::memcpy(&o, &old, sizeof o);
		T n = op(o);
		B nb;
		std::memcpy(&nb, &n, sizeof nb);
		if (__atomic_compare_exchange_n(bp, &old, nb, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return o;
	}
}
/* The value's type U converts to the pointee's T: any arithmetic type, as a GPU's
 * overloads accept after a conversion. */
template <class T, class U> using int_op = std::enable_if_t<std::is_integral<T>::value && std::is_arithmetic<U>::value, T>;
template <class T, class U> using arith_op = std::enable_if_t<std::is_arithmetic<T>::value && std::is_arithmetic<U>::value, T>;
} // namespace cubehip

template <class T, class U> inline cubehip::arith_op<T, U> atomicAdd(T* p, U u) {
	const T v = T(u);
	if constexpr (std::is_integral<T>::value) return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
	else return cubehip::atomic_update(p, [v](T o) { return T(o + v); });
}
template <class T, class U> inline cubehip::arith_op<T, U> atomicSub(T* p, U u) {
	const T v = T(u);
	if constexpr (std::is_integral<T>::value) return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
	else return cubehip::atomic_update(p, [v](T o) { return T(o - v); });
}
template <class T, class U> inline cubehip::int_op<T, U> atomicAnd(T* p, U v) { return __atomic_fetch_and(p, T(v), __ATOMIC_RELAXED); }
template <class T, class U> inline cubehip::int_op<T, U> atomicOr(T* p, U v) { return __atomic_fetch_or(p, T(v), __ATOMIC_RELAXED); }
template <class T, class U> inline cubehip::int_op<T, U> atomicXor(T* p, U v) { return __atomic_fetch_xor(p, T(v), __ATOMIC_RELAXED); }
template <class T, class U> inline cubehip::arith_op<T, U> atomicMax(T* p, U u) {
	const T v = T(u);
	return cubehip::atomic_update(p, [v](T o) { return o < v ? v : o; });
}
template <class T, class U> inline cubehip::arith_op<T, U> atomicMin(T* p, U u) {
	const T v = T(u);
	return cubehip::atomic_update(p, [v](T o) { return v < o ? v : o; });
}
template <class T, class U> inline cubehip::arith_op<T, U> atomicExch(T* p, U u) {
	const T v = T(u);
	if constexpr (std::is_integral<T>::value) return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
	else return cubehip::atomic_update(p, [v](T) { return v; });
}
/* Pointers are exchanged too (a lock-free list's head). */
template <class T> inline T* atomicExch(T** p, T* v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
template <class T, class U, class V> inline cubehip::arith_op<T, U> atomicCAS(T* p, U cmp_, V val_) {
	static_assert(std::is_arithmetic<V>::value, "atomicCAS takes an arithmetic value");
	const T cmp = T(cmp_), v = T(val_);
	using B = typename cubehip::bits_of<T>::type;
	B c, n;
	std::memcpy(&c, &cmp, sizeof c);
	std::memcpy(&n, &v, sizeof n);
	__atomic_compare_exchange_n(reinterpret_cast<B*>(p), &c, n, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	T old;
	std::memcpy(&old, &c, sizeof old);
	return old;
}
template <class T> inline T* atomicCAS(T** p, T* cmp, T* v) {
	__atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return cmp;
}
/* atomicInc wraps to 0 past lim, atomicDec to lim at 0 or above lim (CUDA's definition). */
template <class U> inline unsigned int atomicInc(unsigned int* p, U lim_) {
	const unsigned lim = unsigned(lim_);
	return cubehip::atomic_update(p, [lim](unsigned int o) { return o >= lim ? 0u : o + 1; });
}
template <class U> inline unsigned int atomicDec(unsigned int* p, U lim_) {
	const unsigned lim = unsigned(lim_);
	return cubehip::atomic_update(p, [lim](unsigned int o) { return (o == 0 || o > lim) ? lim : o - 1; });
}

/* Scoped variants (HIP and CUDA spell both) and AMD's no-return and unsafe forms. */
#define CUBEHIP_ATOMIC_ALIAS(name, alias) \
	template <class... A> inline auto alias(A... a) -> decltype(name(a...)) { return name(a...); }
#define CUBEHIP_ATOMIC_SCOPES(name) CUBEHIP_ATOMIC_ALIAS(name, name##_system) CUBEHIP_ATOMIC_ALIAS(name, name##_block)
CUBEHIP_ATOMIC_SCOPES(atomicAdd)
CUBEHIP_ATOMIC_SCOPES(atomicSub)
CUBEHIP_ATOMIC_SCOPES(atomicAnd)
CUBEHIP_ATOMIC_SCOPES(atomicOr)
CUBEHIP_ATOMIC_SCOPES(atomicXor)
CUBEHIP_ATOMIC_SCOPES(atomicMax)
CUBEHIP_ATOMIC_SCOPES(atomicMin)
CUBEHIP_ATOMIC_SCOPES(atomicExch)
CUBEHIP_ATOMIC_SCOPES(atomicCAS)
CUBEHIP_ATOMIC_SCOPES(atomicInc)
CUBEHIP_ATOMIC_SCOPES(atomicDec)
CUBEHIP_ATOMIC_ALIAS(atomicAdd, unsafeAtomicAdd)
CUBEHIP_ATOMIC_ALIAS(atomicAdd, safeAtomicAdd)
CUBEHIP_ATOMIC_ALIAS(atomicMax, unsafeAtomicMax)
CUBEHIP_ATOMIC_ALIAS(atomicMin, unsafeAtomicMin)
CUBEHIP_ATOMIC_ALIAS(atomicMax, safeAtomicMax)
CUBEHIP_ATOMIC_ALIAS(atomicMin, safeAtomicMin)
template <class T, class U> inline void atomicAddNoRet(T* p, U v) { (void)atomicAdd(p, v); }
#undef CUBEHIP_ATOMIC_SCOPES
#undef CUBEHIP_ATOMIC_ALIAS
