/* dlfcn.c: loading kernel objects. dlopen and dlerror are two calls but one C function,
 * so the reason stays attached to the failure even with loads on several threads. */
#include <dlfcn.h>
#include <string.h>

#include "runner.h"

void* cubehip_dlopen(const char* path, char* err, int errlen) {
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL && errlen > 0) {
		const char* e = dlerror();
		strncpy(err, e ? e : "dlopen failed", (size_t)errlen - 1);
		err[errlen - 1] = 0;
	}
	return h;
}

void* cubehip_dlsym(void* h, const char* name) { return dlsym(h, name); }
int cubehip_dlclose(void* h) { return dlclose(h); }
unsigned cubehip_call_sig(void* fn, cubehip_param* params, unsigned cap) { return ((cubehip_sig_fn)fn)(params, cap); }
unsigned cubehip_call_abi(void* fn) { return ((unsigned (*)(void))fn)(); }
int cubehip_call_layout(void* fn, uint64_t* static_size) { return ((cubehip_layout_fn)fn)(static_size); }
