package cpu

import (
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// devicesEnv sets how many devices the cpu platform offers. Every one is the same host
// (same memory, same cores), but each keeps its own allocations, streams and memory
// budget, so programs that drive several GPUs run, and are tested, on a machine with
// none.
const devicesEnv = "CUBEHIP_CPU_DEVICES"

// maxDevices bounds CUBEHIP_CPU_DEVICES: more devices than this is a typo, not a plan,
// and every device advertises the host's whole RAM.
const maxDevices = 64

// deviceCount reads CUBEHIP_CPU_DEVICES: unset or empty is 1, anything but an integer
// in [1, maxDevices] is an error naming the variable and the value.
func deviceCount() (int, error) {
	v := os.Getenv(devicesEnv)
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxDevices {
		return 0, fmt.Errorf("%s=%q: want a device count from 1 to %d", devicesEnv, v, maxDevices)
	}
	return n, nil
}

// devices is the per-device state of the platform that is not a stream or an
// allocation: the count, each OS thread's current device, what each device's hipMalloc
// has charged, and which pairs have peer access enabled.
type devices struct {
	n int

	// current maps an OS thread id to its current device. A thread that never called
	// SetDevice is on device 0, as in HIP. Entries are never removed: a process has a
	// bounded number of threads, and a reused thread id inherits a stale device only
	// where HIP's own per-thread state would too.
	current sync.Map // int (tid) → int

	mu      sync.Mutex
	used    []uint64        // bytes charged by each device's hipMalloc
	enabled map[[2]int]bool // [from, to]: from may access to's memory
}

func newDevices(n int) devices {
	return devices{n: n, used: make([]uint64, n), enabled: map[[2]int]bool{}}
}

// valid reports whether d names a device.
func (d *devices) valid(dev int) bool { return dev >= 0 && dev < d.n }

// currentDevice is the calling OS thread's current device.
func (d *devices) currentDevice() int {
	if d.n == 1 {
		return 0 // one device: no thread id to look up
	}
	if v, ok := d.current.Load(unix.Gettid()); ok {
		return v.(int)
	}
	return 0
}

// charge reserves n bytes of dev's memory (limit) before allocating, so two concurrent
// Mallocs cannot both pass the check; uncharge gives them back.
func (d *devices) charge(dev int, n, limit uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n > limit || d.used[dev] > limit-n {
		return false
	}
	d.used[dev] += n
	return true
}

func (d *devices) uncharge(dev int, n uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.used[dev] -= n
}

func (d *devices) usedBytes(dev int) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.used[dev]
}
