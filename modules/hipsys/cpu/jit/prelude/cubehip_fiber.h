/* cubehip_fiber.h: the register-only context switch behind __syncthreads.
 *
 * cubehip_swap(save, load) saves the callee-saved registers on the current stack, stores
 * the stack pointer in *save, switches to the stack at load and restores that stack's
 * registers. Everything else a C call may clobber is already saved by the compiler at the
 * call site, so this is all a switch needs: no signal mask, no system call (glibc's
 * swapcontext makes one per switch, which costs a microsecond at every barrier of every
 * thread). A fresh fiber's stack is built by cubehip_fiber_stack so that the first switch
 * to it "returns" into cubehip_fiber_main.
 *
 * Not saved: the x87 control word and MXCSR (aarch64: FPCR). Every fiber of a block runs on
 * one OS thread under the same floating-point environment, and kernels do not change it. */
#pragma once

extern "C" __attribute__((visibility("hidden"))) void cubehip_swap(void** save, void* load);
extern "C" __attribute__((visibility("hidden"), noreturn)) void cubehip_fiber_main(void);

#if defined(__x86_64__)
asm(R"(
	.text
	.globl cubehip_swap
	.hidden cubehip_swap
	.type cubehip_swap, @function
	.p2align 4
cubehip_swap:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size cubehip_swap, .-cubehip_swap
)");

namespace cubehip {
/* The stack a fresh fiber starts on: six zeroed registers for cubehip_swap to pop, then
 * the address its ret jumps to, then a zero return address, so the entry starts with
 * rsp = top - 8, exactly as after a call (SysV wants rsp+8 16-byte aligned there). */
inline void* fiber_stack(char* top) {
	void** sp = reinterpret_cast<void**>(top);
	*--sp = nullptr;
	*--sp = reinterpret_cast<void*>(&cubehip_fiber_main);
	for (int i = 0; i < 6; i++) *--sp = nullptr;
	return sp;
}
}

#elif defined(__aarch64__)
/* AAPCS64: x19-x29, the link register and d8-d15 are callee-saved. Tested under
 * qemu-aarch64 (a fiber reduction), not yet on aarch64 hardware. */
asm(R"(
	.text
	.globl cubehip_swap
	.hidden cubehip_swap
	.type cubehip_swap, %function
	.p2align 4
cubehip_swap:
	sub sp, sp, #176
	stp x19, x20, [sp, #0]
	stp x21, x22, [sp, #16]
	stp x23, x24, [sp, #32]
	stp x25, x26, [sp, #48]
	stp x27, x28, [sp, #64]
	stp x29, x30, [sp, #80]
	stp d8, d9, [sp, #96]
	stp d10, d11, [sp, #112]
	stp d12, d13, [sp, #128]
	stp d14, d15, [sp, #144]
	mov x9, sp
	str x9, [x0]
	mov sp, x1
	ldp x19, x20, [sp, #0]
	ldp x21, x22, [sp, #16]
	ldp x23, x24, [sp, #32]
	ldp x25, x26, [sp, #48]
	ldp x27, x28, [sp, #64]
	ldp x29, x30, [sp, #80]
	ldp d8, d9, [sp, #96]
	ldp d10, d11, [sp, #112]
	ldp d12, d13, [sp, #128]
	ldp d14, d15, [sp, #144]
	add sp, sp, #176
	ret
	.size cubehip_swap, .-cubehip_swap
)");

namespace cubehip {
/* A zeroed 176-byte frame whose saved x30 (at +88) is the entry: ret jumps there with
 * sp = top, 16-byte aligned as AAPCS64 requires. */
inline void* fiber_stack(char* top) {
	void** sp = reinterpret_cast<void**>(top - 176);
	for (int i = 0; i < 22; i++) sp[i] = nullptr;
	sp[11] = reinterpret_cast<void*>(&cubehip_fiber_main);
	return sp;
}
}
#else
#error "cubehip cpu jit: no fiber switch for this architecture (x86-64 and aarch64 only)"
#endif
