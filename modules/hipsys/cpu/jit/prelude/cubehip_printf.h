/* cubehip_printf.h: device printf on the host. A GPU collects printf output in a buffer
 * and the host prints it when it synchronizes, so a kernel's lines never interleave with
 * the host's own output mid-line and come out in launch order. Here each OS thread
 * formats into its own buffer (no lock on the kernel's path) and the launcher writes it to
 * standard output with write(2) when it finishes its range of blocks, before the launch
 * returns: so every line of a launch is out before the next launch on the stream starts,
 * and before any synchronization returns. A buffer that fills up is written at once. */
#pragma once
#include <cstdio>
#include <unistd.h>

namespace cubehip {
struct print_buffer {
	size_t len;
	char data[16384];
};
CUBEHIP_HIDDEN __thread print_buffer print_tls;

inline void print_flush() {
	print_buffer& b = print_tls;
	for (size_t off = 0; off < b.len;) {
		ssize_t n = ::write(1, b.data + off, b.len - off);
		if (n <= 0) break; /* nothing a kernel could do about a closed stdout */
		off += size_t(n);
	}
	b.len = 0;
}

template <class... A> int device_printf(const char* fmt, A... args) {
	print_buffer& b = print_tls;
	const size_t room = sizeof b.data - b.len;
	int n = std::snprintf(b.data + b.len, room, fmt, args...);
	if (n < 0) return n;
	if (size_t(n) < room) {
		b.len += size_t(n);
		return n;
	}
	/* Too long for what is left: write what is buffered, then format again into the
	 * emptied buffer, or straight out when the line alone is over its size. */
	b.data[b.len] = 0;
	print_flush();
	if (size_t(n) < sizeof b.data) {
		std::snprintf(b.data, sizeof b.data, fmt, args...);
		b.len = size_t(n);
	} else {
		std::fflush(stdout);
		::dprintf(1, fmt, args...);
	}
	return n;
}
} // namespace cubehip

/* A macro, not a function: <cstdio> already declares ::printf with C linkage. */
#define printf(...) ::cubehip::device_printf(__VA_ARGS__)
