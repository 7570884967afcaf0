// Package rawdriver is the raw CUDA driver API as a plain C program calls it, for
// measuring and testing package nvidia; nothing in production imports it. It holds two
// things:
//
//   - The anchor loops (Driver): the loops of nvidia/bench/anchor.c, compiled into the
//     calling process and timed in C, one cgo call per loop. A benchmark pairs the
//     platform's Go path with the loop that does the same driver work in the same
//     process (package paired), since two processes' figures differ by more than the
//     budgets measured. Driver opens libcuda.so.1 itself (the same library instance
//     package nvidia uses) and makes the device's primary context current for each
//     loop, restoring the thread's context after, so it neither imports nor disturbs
//     package nvidia. The loops run nothing of the launch queue: a benchmark settles
//     (syncs) what it queued before a loop starts.
//   - The fake driver entries (FakeLaunchEntry, FakeParamInfoEntry): recording
//     stand-ins for cuLaunchKernel and cuFuncGetParamInfo, for package nvidia's tests of
//     the launch queue and of FuncGetParams on machines without a GPU. They live here
//     because a _test.go file cannot use cgo.
//
// The package imports hipsys and hipsys/dl only, so package nvidia's own tests can
// import it.
package rawdriver
