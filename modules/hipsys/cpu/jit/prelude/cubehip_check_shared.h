/* cubehip_check_shared.h: the checker's judgement of a block's shared memory, in a checked
 * module (cubehip_check.h has the rest and the invariants). Included at the end of the
 * prelude: it needs the block's context (cubehip_entry.h), its fibers' barrier generation
 * and the shared arena's layout (cubehip_shared.h).
 *
 * Per OS thread, one record per byte of the arena's span: who wrote it last and in which
 * barrier generation of which block (racecheck), who read it last likewise, and which
 * block wrote it (initcheck). A generation is (the OS thread's count of blocks it began,
 * the block's barrier epoch): two accesses of one generation by different threads, one
 * of them a write, have no barrier between them, which is a race on a GPU whatever order
 * they ran in here. */
#pragma once

namespace cubehip {
/* The arena's span and guards, as runner.c maps them: an address this near the static
 * variables' base is a shared access. */
constexpr uint64_t check_shared_guard = uint64_t(1) << 20;
constexpr uint16_t no_tid = 0xffff;
constexpr uint64_t check_shared_span = (uint64_t(CUBEHIP_MAX_SHARED) + 4095) / 4096 * 4096 + 2 * 4096;

/* The records: racecheck's are a generation and a thread packed in one word (record), the
 * generation being the OS thread's dense count g of (block, barrier epoch) pairs its
 * accesses met, so that one compare tells whether a byte was touched in this generation
 * and by whom. Invariants: g only grows, and a new block or barrier epoch always moves
 * it (advance); a record whose generation is not g is from an earlier generation and
 * never a race; g stays below 2^48 (records are cleared and g starts over before). */
constexpr uint64_t check_gen_limit = uint64_t(1) << 48;
struct shared_records {
	uint64_t blocks;      /* blocks begun on this OS thread (check_block), initcheck's marks */
	uint64_t seen_blocks; /* the block and epoch g stands for */
	uint64_t seen_epoch;
	uint64_t g;
	uint64_t w[check_shared_span], r[check_shared_span]; /* record(g, thread) of the last write, the first read */
	/* A generation's second reader of a byte (no_tid: one so far), so that a thread's
	 * write after its own read still meets another thread's earlier read. */
	uint16_t r2[check_shared_span];
	uint64_t wpc[check_shared_span], rpc[check_shared_span], rpc2[check_shared_span];
	uint64_t init[check_shared_span]; /* the block (blocks) that wrote it; 0 none (blocks never wraps) */
};
CUBEHIP_HIDDEN __thread shared_records* check_sh;

CUBEHIP_UNCHECKED constexpr uint64_t record(uint64_t g, unsigned t) { return g << 16 | t; }

/* The generation of an access in the block's barrier epoch ep. */
CUBEHIP_UNCHECKED inline uint64_t advance(shared_records* s, uint64_t ep) {
	if (ep != s->seen_epoch || s->blocks != s->seen_blocks) {
		if (++s->g == check_gen_limit) {
			memset(s->w, 0, sizeof s->w), memset(s->r, 0, sizeof s->r);
			s->g = 1;
		}
		s->seen_epoch = ep, s->seen_blocks = s->blocks;
	}
	return s->g;
}

/* A report of the shared access [a, a+n) of thread t: the variable it falls in, and the
 * other thread and its access's return address for a race. Cold: only findings get here. */
__attribute__((no_sanitize("thread", "address", "kernel-address", "alignment"), noinline, cold)) inline void
shared_report(cubehip_check_ctx* c, const block_ctx* b, uint64_t a, uint32_t n, uint32_t write, void* pc, uint32_t kind,
              unsigned other, uint64_t opc) {
	cubehip_check_report* rep = check_claim(c);
	if (rep == nullptr) return;
	const uint64_t base = uint64_t(b->shared), dyn = uint64_t(b->dyn);
	rep->kind = kind, rep->addr = a, rep->size = n, rep->write = write, rep->region = -1;
	rep->pc = uint64_t(pc), rep->pc2 = opc, rep->name = "", rep->name_off = int64_t(a - dyn);
	const unsigned bx = b->bdim.x, by = b->bdim.y;
	rep->thread2[0] = other % bx, rep->thread2[1] = other / bx % by, rep->thread2[2] = other / (bx * by);
	if (a < dyn || b->dyn_size == 0) {
		/* The static variable at or before the address, among this kernel's. */
		unsigned nv = 0;
		const cubehip_shared_var* vars = cubehip_shared_vars(&nv);
		const uint64_t off = a - base;
		const cubehip_shared_var* best = nullptr;
		for (unsigned i = 0; i < nv; i++)
			if (vars[i].offset <= off && (best == nullptr || vars[i].offset > best->offset)) best = &vars[i];
		if (best != nullptr) rep->name = best->name, rep->name_off = int64_t(off - best->offset);
		else rep->name = "", rep->name_off = int64_t(off);
	}
}

/* Judges an access if it is shared memory's (reporting it true): the thread-locals it needs
 * are the module's, reached from one base (-ftls-model=local-dynamic, check.go), and only a
 * finding leaves this function. */
CUBEHIP_UNCHECKED inline bool check_shared(cubehip_check_ctx* c, uint64_t a, uint32_t n, uint32_t write, void* pc, bool atomic) {
	if (a < __atomic_load_n(c->arena_min, __ATOMIC_RELAXED) || a >= __atomic_load_n(c->arena_max, __ATOMIC_RELAXED)) return false;
	const block_ctx* b = &ctx_tls;
	const uint64_t base = uint64_t(b->shared);
	if (base == 0 || a + check_shared_guard < base || a >= base + check_shared_span + check_shared_guard) return false;
	const uint64_t dyn = uint64_t(b->dyn);
	const unsigned t = ::threadIdx.x + b->bdim.x * (::threadIdx.y + b->bdim.y * ::threadIdx.z);
	const bool in_static = a >= base && a + n <= base + b->static_size;
	const bool in_dyn = b->dyn_size > 0 && a >= dyn && a + n <= dyn + b->dyn_size;
	if (!in_static && !in_dyn) {
		if (c->checks & 1u) shared_report(c, b, a, n, write, pc, CUBEHIP_CHECK_SHARED_OOB, t, 0);
		return true;
	}
	if (!(c->checks & (2u | 8u))) return true;
	shared_records* s = check_sh;
	if (__builtin_expect(s == nullptr, 0)) {
		s = check_sh = static_cast<shared_records*>(calloc(1, sizeof(shared_records)));
		if (s == nullptr) return true;
		s->blocks = 1;
	}
	const uint64_t i0 = a - base;
	if (c->checks & 2u) {
		if (!write || atomic) {
			for (uint32_t k = 0; k < n; k++)
				if (s->init[i0 + k] != s->blocks) {
					shared_report(c, b, a, n, write, pc, CUBEHIP_CHECK_SHARED_UNINIT, t, 0);
					for (uint32_t j = 0; j < n; j++) s->init[i0 + j] = s->blocks; /* once per access */
					break;
				}
		}
		if (write) {
			for (uint32_t k = 0; k < n; k++) s->init[i0 + k] = s->blocks;
#ifdef CUBEHIP_CHECK_SHADOW
			/* initcheck's poison lifted from each granule the block has now written whole
			 * (check_block poisons the windows again for the next block). */
			const uint64_t ws = in_static ? base : dyn, we = in_static ? base + b->static_size : dyn + b->dyn_size;
			for (uint64_t g = a & ~uint64_t(7); g < a + n; g += 8) {
				const uint64_t b0 = g < ws ? ws : g, b1 = g + 8 < we ? g + 8 : we;
				bool all = true;
				for (uint64_t x = b0; x < b1 && all; x++) all = s->init[x - base] == s->blocks;
				if (all) *reinterpret_cast<unsigned char*>((g >> 3) + CUBEHIP_CHECK_SHADOW) = g + 8 <= we ? 0 : (unsigned char)(we - g);
			}
#endif
		}
	}
	if (!(c->checks & 8u) || atomic) return true;
	/* A fiber counts its block's barriers; regions count them on the OS thread. */
	const fibers* f = current;
	const uint64_t g = advance(s, f != nullptr ? f->epoch : b->epoch);
	const uint64_t me = record(g, t);
	for (uint32_t k = 0; k < n; k++) {
		const uint64_t i = i0 + k;
		const uint64_t w = s->w[i], r = s->r[i];
		if (write) {
			if (w >> 16 == g && w != me) {
				shared_report(c, b, a, n, write, pc, CUBEHIP_CHECK_RACE_WAW, unsigned(w & 0xffff), s->wpc[i]);
				break;
			}
			if (r >> 16 == g && (r != me || s->r2[i] != no_tid)) {
				const bool first = r != me;
				shared_report(c, b, a, n, write, pc, CUBEHIP_CHECK_RACE_WAR, first ? unsigned(r & 0xffff) : s->r2[i],
				              first ? s->rpc[i] : s->rpc2[i]);
				break;
			}
		} else if (w >> 16 == g && w != me) {
			shared_report(c, b, a, n, write, pc, CUBEHIP_CHECK_RACE_RAW, unsigned(w & 0xffff), s->wpc[i]);
			break;
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		const uint64_t i = i0 + k;
		if (write) {
			s->w[i] = me, s->wpc[i] = uint64_t(pc);
		} else if (s->r[i] >> 16 != g) {
			s->r[i] = me, s->rpc[i] = uint64_t(pc), s->r2[i] = no_tid;
		} else if (s->r[i] != me && s->r2[i] == no_tid) {
			s->r2[i] = uint16_t(t), s->rpc2[i] = uint64_t(pc);
		}
	}
	return true;
}
} // namespace cubehip

namespace cubehip {
/* The threads of the block whose exit a region barrier has reported (synccheck), and the
 * block they are of. */
CUBEHIP_HIDDEN __thread uint64_t check_exited_key;

/* A barrier of a block running as regions (CUBEHIP_REGION_BARRIER, at the end of one
 * thread loop and before the next): racecheck's next generation; for synccheck, a thread
 * that returned (live, where the body returns) while others go on to this barrier, which
 * a GPU's barrier would wait for in vain. Each exit is reported at the first barrier
 * after it, as fibers report it at the end of its generation. line is the barrier's. */
CUBEHIP_NO_CHECK inline void check_region_barrier(unsigned line, const unsigned char* live) {
	cubehip_check_ctx* c = check_ctx;
	if (c == nullptr) return;
	block_ctx* b = block();
	b->epoch++;
	if (!(c->checks & 4u) || live == nullptr) return;
	const unsigned bx = b->bdim.x, by = b->bdim.y, n = bx * by * b->bdim.z;
	/* The block: the thread-local blockIdx, which a block range's loop keeps current (the
	 * context's bid is the range's first). */
	const uint64_t key = c->serial << 40 ^ (uint64_t(::blockIdx.x) + uint64_t(::blockIdx.y) * ::gridDim.x +
	                                      uint64_t(::blockIdx.z) * ::gridDim.x * ::gridDim.y);
	if (key != check_exited_key) {
		check_exited_key = key;
		for (unsigned t = 0; t < n; t++) check_exited[t] = 0;
	}
	unsigned waiting = n, exited = n;
	for (unsigned t = 0; t < n; t++) {
		if (live[t]) {
			if (waiting == n) waiting = t;
		} else if (!check_exited[t]) {
			check_exited[t] = 1;
			if (exited == n) exited = t;
		}
	}
	if (waiting == n || exited == n) return;
	const uint3 saved = ::threadIdx;
	::threadIdx = uint3{waiting % bx, waiting / bx % by, waiting / (bx * by)};
	cubehip_check_report* rep = check_claim(c);
	::threadIdx = saved;
	if (rep == nullptr) return;
	rep->kind = CUBEHIP_CHECK_EXITED, rep->addr = 0, rep->size = 0, rep->write = 0, rep->region = -1, rep->name = nullptr;
	rep->pc = line, rep->pc2 = 0;
	rep->thread2[0] = exited % bx, rep->thread2[1] = exited / bx % by, rep->thread2[2] = exited / (bx * by);
}
} // namespace cubehip

#ifdef CUBEHIP_CHECK_SHADOW
namespace cubehip {
constexpr unsigned char shadow_shared_oob = 0xf9; /* outside the block's windows */
constexpr unsigned char shadow_unwritten = 0xe1;  /* initcheck: not written yet (jit/shadow.go) */

/* Sets the inline shadow of the granules [lo, hi) (multiples of 8) to v. */
CUBEHIP_NO_CHECK inline void shadow_fill(uint64_t lo, uint64_t hi, unsigned char v) {
	if (hi > lo) memset(reinterpret_cast<void*>((lo >> 3) + CUBEHIP_CHECK_SHADOW), v, (hi - lo) >> 3);
}

/* The windows of the block's shared memory, as the arena's shadow holds them last. */
struct arena_marks {
	char *shared, *dyn;
	uint64_t static_size, dyn_size;
};

/* Where an arena's marks are kept: in the shadow of the arena's own shadow, memory that
 * shadows no address anyone maps (the shadow range is reserved whole), one place per
 * arena (arenas lie megabytes apart), zero until marked, and the same for every checked
 * module of the process; a thread-local would be the module's own, and another module
 * marking the same arena would leave it stale. */
CUBEHIP_NO_CHECK inline arena_marks* marks_of(uint64_t base) {
	return reinterpret_cast<arena_marks*>((((base >> 3) + CUBEHIP_CHECK_SHADOW) >> 3) + CUBEHIP_CHECK_SHADOW);
}

/* Poisons the arena's span (and, the first time, its guards) but for the static and the
 * dynamic windows, whose bytes are addressable to the byte: an access past a __shared__
 * array reaches the judge even where it stays inside a page the runner made read-write. */
CUBEHIP_NO_CHECK inline void check_arena(const cubehip_arena* a) {
	if (a->shared == nullptr) return;
	arena_marks& m = *marks_of(uint64_t(a->shared));
	if (m.shared == a->shared && m.dyn == a->dyn && m.static_size == a->static_size && m.dyn_size == a->dyn_size) return;
	const uint64_t base = uint64_t(a->shared);
	if (m.shared != a->shared) {
		shadow_fill(base - check_shared_guard, base, shadow_shared_oob);
		shadow_fill(base + check_shared_span, base + check_shared_span + check_shared_guard, shadow_shared_oob);
	}
	shadow_fill(base, base + check_shared_span, shadow_shared_oob);
	auto window = [](uint64_t lo, uint64_t n) {
		shadow_fill(lo, lo + (n & ~uint64_t(7)), 0);
		if (n & 7) *reinterpret_cast<unsigned char*>(((lo + (n & ~uint64_t(7))) >> 3) + CUBEHIP_CHECK_SHADOW) = (unsigned char)(n & 7);
	};
	window(base, a->static_size);
	if (a->dyn_size > 0) window(uint64_t(a->dyn), a->dyn_size);
	m = arena_marks{a->shared, a->dyn, a->static_size, a->dyn_size};
}
} // namespace cubehip
#endif

namespace cubehip {
/* A block begins on this OS thread: its shared records' block (racecheck's next
 * generation, initcheck's marks), and under inline initcheck its shared windows are
 * unwritten again (the judge lifts the poison as the block writes them). Every block
 * start of every entry mode comes here (set_block, each_block). */
CUBEHIP_NO_CHECK inline void check_block() {
	cubehip_check_ctx* c = check_ctx;
	if (c == nullptr) return;
	if (check_sh != nullptr) check_sh->blocks++;
#ifdef CUBEHIP_CHECK_SHADOW
	if (!(c->checks & 2u)) return;
	const block_ctx* b = block();
	if (b->shared == nullptr) return;
	const uint64_t s = uint64_t(b->shared), d = uint64_t(b->dyn);
	shadow_fill(s, (s + b->static_size + 7) & ~uint64_t(7), shadow_unwritten);
	if (b->dyn_size > 0) shadow_fill(d, (d + b->dyn_size + 7) & ~uint64_t(7), shadow_unwritten);
#endif
}
} // namespace cubehip
