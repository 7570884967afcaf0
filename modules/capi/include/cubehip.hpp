// cubehip.hpp: a header-only C++17 wrapper over cubehip.h. Handles are move-only owners
// that give their object back when they go out of scope; a failed call throws
// cubehip::error, which carries the status and the thread's message.
//
//   cubehip::device dev;                               // the default device
//   auto x = dev.alloc_typed(CUBEHIP_DTYPE_F32, n);      // checked against the kernel's float*
//   x.write(host.data(), n * sizeof(float));
//   cubehip::kernel k(dev, source, "saxpy");           // 256 threads a block; x read, y read and written
//   k.launch({blocks, 1, 1}, {cubehip::arg(n), cubehip::arg(2.0f), cubehip::arg(x), cubehip::arg(y)});
//   y.read(host.data(), n * sizeof(float));            // throws the failure y carries, if any
#ifndef CUBEHIP_HPP
#define CUBEHIP_HPP

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cubehip.h"

namespace cubehip {

// error is a failed call: status() is the cubehip_status, what() names the call, the
// status and the library's message.
class error : public std::runtime_error {
public:
	error(cubehip_status s, const char* call)
		: std::runtime_error(std::string(call) + ": " + cubehip_status_string(s) + ": " + cubehip_last_error()),
		  status_(s) {}
	cubehip_status status() const noexcept { return status_; }

private:
	cubehip_status status_;
};

namespace detail {
inline void check(cubehip_status s, const char* call) {
	if (s != CUBEHIP_SUCCESS) throw error(s, call);
}
// owner holds one handle and releases it once; moving hands the handle over.
template <class H, cubehip_status (*Release)(H)> class owner {
public:
	owner() noexcept : h_{} {}
	explicit owner(H h) noexcept : h_(h) {}
	owner(const owner&) = delete;
	owner& operator=(const owner&) = delete;
	owner(owner&& o) noexcept : h_(o.h_) { o.h_ = H{}; }
	owner& operator=(owner&& o) noexcept {
		if (this != &o) {
			reset();
			h_ = o.h_;
			o.h_ = H{};
		}
		return *this;
	}
	~owner() { reset(); }
	H get() const noexcept { return h_; }
	explicit operator bool() const noexcept { return h_.id != 0; }
	// release hands the handle to the caller, who releases it.
	H release() noexcept {
		H h = h_;
		h_ = H{};
		return h;
	}
	// A destructor cannot throw: a failure of the release is dropped here; call the C
	// function yourself where it matters.
	void reset() noexcept {
		if (h_.id != 0) Release(h_);
		h_ = H{};
	}

private:
	H h_;
};
} // namespace detail

class device;

// buffer is device memory; its reads return the failure it carries, as an error.
class buffer {
public:
	buffer() = default;
	explicit buffer(cubehip_buffer h) noexcept : h_(h) {}
	cubehip_buffer handle() const noexcept { return h_.get(); }
	std::uint64_t size() const {
		std::uint64_t n = 0;
		detail::check(cubehip_buffer_size(h_.get(), &n), "cubehip_buffer_size");
		return n;
	}
	// The element type it was allocated with (CUBEHIP_DTYPE_NONE: untyped).
	cubehip_dtype dtype() const {
		std::int32_t t = 0;
		detail::check(cubehip_buffer_dtype(h_.get(), &t), "cubehip_buffer_dtype");
		return static_cast<cubehip_dtype>(t);
	}
	void write(const void* src, std::uint64_t n, std::uint64_t offset = 0, std::uint64_t stream = 0) {
		detail::check(cubehip_buffer_write(h_.get(), stream, offset, src, n), "cubehip_buffer_write");
	}
	void read(void* dst, std::uint64_t n, std::uint64_t offset = 0, std::uint64_t stream = 0) const {
		detail::check(cubehip_buffer_read(h_.get(), stream, offset, dst, n), "cubehip_buffer_read");
	}
	template <class T> void write(const std::vector<T>& v, std::uint64_t stream = 0) {
		write(v.data(), v.size() * sizeof(T), 0, stream);
	}
	template <class T> std::vector<T> read(std::uint64_t stream = 0) const {
		std::vector<T> v(size() / sizeof(T));
		read(v.data(), v.size() * sizeof(T), 0, stream);
		return v;
	}
	void check() const { detail::check(cubehip_buffer_check(h_.get()), "cubehip_buffer_check"); }
	void sync() const { detail::check(cubehip_buffer_sync(h_.get()), "cubehip_buffer_sync"); }
	// Another library's stream waits on the device for the buffer's writes
	// (cubehip_buffer_order_before); no host wait.
	void order_before(std::uint64_t native_stream) const {
		detail::check(cubehip_buffer_order_before(h_.get(), native_stream), "cubehip_buffer_order_before");
	}

private:
	detail::owner<cubehip_buffer, cubehip_buffer_release> h_;
};

// arg is one kernel argument, built from a buffer or a scalar of the parameter's type.
inline cubehip_arg arg(const buffer& b, cubehip_access access = CUBEHIP_ACCESS_DEFAULT) {
	cubehip_arg a{};
	a.kind = CUBEHIP_ARG_BUFFER;
	a.access = access;
	a.v.buffer.buffer = b.handle();
	return a;
}
inline cubehip_arg arg(std::int32_t v) {
	cubehip_arg a{};
	a.kind = CUBEHIP_ARG_I32;
	a.v.i64 = v;
	return a;
}
inline cubehip_arg arg(std::uint32_t v) {
	cubehip_arg a{};
	a.kind = CUBEHIP_ARG_U32;
	a.v.u64 = v;
	return a;
}
inline cubehip_arg arg(std::int64_t v) {
	cubehip_arg a{};
	a.kind = CUBEHIP_ARG_I64;
	a.v.i64 = v;
	return a;
}
inline cubehip_arg arg(std::uint64_t v) {
	cubehip_arg a{};
	a.kind = CUBEHIP_ARG_U64;
	a.v.u64 = v;
	return a;
}
inline cubehip_arg arg(float v) {
	cubehip_arg a{};
	a.kind = CUBEHIP_ARG_F32;
	a.v.f32 = v;
	return a;
}
inline cubehip_arg arg(std::int8_t v) { return cubehip_arg_i8(v); }
inline cubehip_arg arg(std::uint8_t v) { return cubehip_arg_u8(v); }
inline cubehip_arg arg(std::int16_t v) { return cubehip_arg_i16(v); }
inline cubehip_arg arg(std::uint16_t v) { return cubehip_arg_u16(v); }
// arg_struct is a by-value struct argument: T laid out as the kernel's C type is.
template <class T> inline cubehip_arg arg_struct(const T& v) {
	return cubehip_arg_bytes(&v, static_cast<std::uint32_t>(sizeof(T)), static_cast<std::uint32_t>(alignof(T)));
}
inline cubehip_arg arg(double v) {
	cubehip_arg a{};
	a.kind = CUBEHIP_ARG_F64;
	a.v.f64 = v;
	return a;
}

// graph is recorded work, replayed on the stream it was recorded on.
class graph {
public:
	graph() = default;
	explicit graph(cubehip_graph h) noexcept : h_(h) {}
	cubehip_graph handle() const noexcept { return h_.get(); }
	void replay() { detail::check(cubehip_graph_replay(h_.get()), "cubehip_graph_replay"); }

private:
	detail::owner<cubehip_graph, cubehip_graph_destroy> h_;
};

// profile is an open profiling window; stop() gives its device time in nanoseconds.
class profile {
public:
	profile() = default;
	explicit profile(cubehip_profile h) noexcept : h_(h) {}
	std::uint64_t stop() {
		std::uint64_t ns = 0;
		cubehip_profile h = h_.release(); // stop ends the window whatever it returns
		detail::check(cubehip_profile_stop(h, &ns), "cubehip_profile_stop");
		return ns;
	}

private:
	detail::owner<cubehip_profile, cubehip_profile_abandon> h_;
};

// device is an open device; closing it (the destructor) invalidates every handle it made.
class device {
public:
	// Opens device index of platform (nullptr or "auto": the default).
	explicit device(const char* platform = nullptr, int index = 0) {
		cubehip_device h{};
		detail::check(cubehip_device_open(platform, index, nullptr, &h), "cubehip_device_open");
		h_ = decltype(h_)(h);
	}
	cubehip_device handle() const noexcept { return h_.get(); }
	cubehip_device_props properties() const {
		cubehip_device_props p{};
		p.size = sizeof p;
		detail::check(cubehip_device_get_properties(h_.get(), &p), "cubehip_device_get_properties");
		return p;
	}
	buffer alloc(std::uint64_t size, std::uint64_t stream = 0) {
		cubehip_buffer b{};
		detail::check(cubehip_buffer_alloc(h_.get(), stream, size, &b), "cubehip_buffer_alloc");
		return buffer(b);
	}
	// count elements of dtype (cubehip_buffer_alloc_typed): a launch refuses the buffer
	// for a pointer the kernel declares with another element type.
	buffer alloc_typed(cubehip_dtype dtype, std::uint64_t count, std::uint64_t stream = 0) {
		cubehip_buffer b{};
		detail::check(cubehip_buffer_alloc_typed(h_.get(), stream, dtype, count, &b), "cubehip_buffer_alloc_typed");
		return buffer(b);
	}
	// Another library's device memory as a buffer, without copying (cubehip_buffer_import):
	// release(user_data) is called once, from a library thread, when the device no longer
	// uses it; not at all if this throws.
	buffer import_memory(std::uint64_t device_pointer, std::uint64_t nbytes, cubehip_release_fn release, void* user_data,
		std::uint64_t stream = 0) {
		cubehip_buffer b{};
		detail::check(cubehip_buffer_import(h_.get(), stream, device_pointer, nbytes, release, user_data, &b),
			"cubehip_buffer_import");
		return buffer(b);
	}
	// The platform's handle of the device stream (cubehip_stream_native_handle).
	std::uint64_t native_stream(std::uint64_t stream = 0) {
		std::uint64_t h = 0;
		detail::check(cubehip_stream_native_handle(h_.get(), stream, &h), "cubehip_stream_native_handle");
		return h;
	}
	// The stream waits on the device for another library's stream (cubehip_stream_wait_native).
	void wait_native(std::uint64_t native_stream, std::uint64_t stream = 0) {
		detail::check(cubehip_stream_wait_native(h_.get(), stream, native_stream), "cubehip_stream_wait_native");
	}
	// The device's export stream (cubehip_device_export_stream).
	std::uint64_t export_stream() {
		std::uint64_t h = 0;
		detail::check(cubehip_device_export_stream(h_.get(), &h), "cubehip_device_export_stream");
		return h;
	}
	void sync(std::uint64_t stream = 0) { detail::check(cubehip_device_sync(h_.get(), stream), "cubehip_device_sync"); }
	void begin_capture(std::uint64_t stream = 0) {
		detail::check(cubehip_capture_begin(h_.get(), stream), "cubehip_capture_begin");
	}
	graph end_capture(std::uint64_t stream = 0) {
		cubehip_graph g{};
		detail::check(cubehip_capture_end(h_.get(), stream, &g), "cubehip_capture_end");
		return graph(g);
	}
	profile start_profile(std::uint64_t stream = 0) {
		cubehip_profile p{};
		detail::check(cubehip_profile_start(h_.get(), stream, &p), "cubehip_profile_start");
		return profile(p);
	}
	// Traces (cubehip_trace_start): stop_trace ends the open trace and writes it to path;
	// flush_trace writes the CUBEHIP_TRACE one now, for a host that exits without closing
	// the device (a no-op without one).
	void start_trace() { detail::check(cubehip_trace_start(h_.get()), "cubehip_trace_start"); }
	void stop_trace(const std::string& path) {
		detail::check(cubehip_trace_stop(h_.get(), path.c_str()), "cubehip_trace_stop");
	}
	void flush_trace() { detail::check(cubehip_trace_flush(h_.get()), "cubehip_trace_flush"); }
	cubehip_memory_usage memory_usage() const {
		cubehip_memory_usage u{};
		u.size = sizeof u;
		detail::check(cubehip_memory_usage_get(h_.get(), &u), "cubehip_memory_usage_get");
		return u;
	}

private:
	detail::owner<cubehip_device, cubehip_device_close> h_;
};

// kernel is HIP C++ source with an extern "C" __global__ entry point. An empty access
// list (the default) reads each buffer's access from the entry's declaration (desc.access
// NULL): a const T* is read, any other pointer read and written. flags are desc.flags
// (CUBEHIP_KERNEL_COOPERATIVE).
class kernel {
public:
	kernel(device& dev, const std::string& source, const std::string& entry,
		std::initializer_list<std::uint32_t> block = {}, std::initializer_list<cubehip_access> access = {},
		std::uint32_t shared_mem = 0, const std::vector<std::string>& options = {}, std::uint32_t flags = 0) {
		std::vector<cubehip_access> acc(access);
		std::vector<const char*> opts;
		for (const auto& o : options) opts.push_back(o.c_str());
		cubehip_kernel_desc d{};
		d.size = sizeof d;
		d.source = source.c_str();
		d.entry = entry.c_str();
		// Dimensions left out stay 0: a 0 in y or z is 1, and an empty block ({}) the
		// default block, 256 x 1 x 1, as in the C desc.
		std::uint32_t i = 0;
		for (std::uint32_t b : block)
			if (i < 3) d.block[i++] = b;
		d.shared_mem = shared_mem;
		// An empty vector's data() may or may not be NULL: say NULL, so that an empty
		// list always means "read from the declaration".
		d.access = acc.empty() ? nullptr : acc.data();
		d.access_count = acc.size();
		d.options = opts.data();
		d.option_count = opts.size();
		d.flags = flags;
		cubehip_kernel h{};
		detail::check(cubehip_kernel_create(dev.handle(), &d, &h), "cubehip_kernel_create");
		h_ = decltype(h_)(h);
	}
	cubehip_kernel handle() const noexcept { return h_.get(); }
	// Compiles now; a compile error throws, with the compiler's log in log().
	void compile() { detail::check(cubehip_kernel_compile(h_.get()), "cubehip_kernel_compile"); }
	std::string log() const {
		std::size_t n = 0;
		detail::check(cubehip_kernel_log(h_.get(), nullptr, 0, &n), "cubehip_kernel_log");
		std::string s(n + 1, '\0');
		detail::check(cubehip_kernel_log(h_.get(), &s[0], s.size(), nullptr), "cubehip_kernel_log");
		s.resize(n);
		return s;
	}
	void launch(const std::uint32_t (&grid)[3], std::initializer_list<cubehip_arg> args, std::uint64_t stream = 0) {
		detail::check(cubehip_launch(h_.get(), stream, grid, args.begin(), args.size()), "cubehip_launch");
	}
	// Blocks of block_threads threads one multiprocessor holds at once (compiles first).
	int max_active_blocks(std::uint32_t block_threads, std::uint32_t shared_mem = 0) const {
		std::int32_t n = 0;
		detail::check(cubehip_kernel_max_active_blocks(h_.get(), block_threads, shared_mem, &n), "cubehip_kernel_max_active_blocks");
		return n;
	}
	// One of the kernel's attributes on its device (compiles first), and the setter of the
	// settable ones: max_dynamic_shared_size_bytes raises (or lowers) the dynamic shared
	// memory a launch of it may ask for.
	int attribute(cubehip_func_attribute attr) const {
		int v = 0;
		detail::check(cubehip_kernel_get_attribute(h_.get(), attr, &v), "cubehip_kernel_get_attribute");
		return v;
	}
	void set_attribute(cubehip_func_attribute attr, int value) const {
		detail::check(cubehip_kernel_set_attribute(h_.get(), attr, value), "cubehip_kernel_set_attribute");
	}
	void set_max_dynamic_shared_size_bytes(int bytes) const {
		set_attribute(CUBEHIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
	}

	// The module variable name (a __constant__ or __device__ variable of the kernel's
	// source): its size in bytes, a write queued on the stream (the stream's next launch
	// sees it), and a read after the stream's earlier work. A wrong size or an unknown name
	// throws, naming the variable.
	std::uint64_t global_size(const std::string& name) const {
		std::uint64_t n = 0;
		detail::check(cubehip_kernel_global_size(h_.get(), name.c_str(), &n), "cubehip_kernel_global_size");
		return n;
	}
	void write_global(const std::string& name, const void* src, std::uint64_t n, std::uint64_t stream = 0) {
		detail::check(cubehip_kernel_global_write(h_.get(), stream, name.c_str(), src, n), "cubehip_kernel_global_write");
	}
	void read_global(const std::string& name, void* dst, std::uint64_t n, std::uint64_t stream = 0) const {
		detail::check(cubehip_kernel_global_read(h_.get(), stream, name.c_str(), dst, n), "cubehip_kernel_global_read");
	}
	template <class T> void write_global(const std::string& name, const std::vector<T>& v, std::uint64_t stream = 0) {
		write_global(name, v.data(), v.size() * sizeof(T), stream);
	}
	// The whole variable as Ts; its size must be a multiple of sizeof(T).
	template <class T> std::vector<T> read_global(const std::string& name, std::uint64_t stream = 0) const {
		std::uint64_t n = global_size(name);
		if (n % sizeof(T) != 0)
			throw std::invalid_argument("module variable " + name + " holds " + std::to_string(n) +
				" bytes, no whole number of elements of " + std::to_string(sizeof(T)) + " bytes");
		std::vector<T> v(n / sizeof(T));
		read_global(name, v.data(), n, stream);
		return v;
	}

private:
	detail::owner<cubehip_kernel, cubehip_kernel_destroy> h_;
};

} // namespace cubehip

#endif // CUBEHIP_HPP
