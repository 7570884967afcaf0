package memory_test

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/memory/memorytest"
)

// The main flow: a manager over a storage, a reservation, a binding that
// resolves to an address, release and cleanup.
func Example() {
	storage := memorytest.New()
	m, err := memory.New(storage, memory.DeviceProps{MemoryTotal: 8 << 30, Alignment: 256})
	if err != nil {
		panic(err)
	}

	h, err := m.Reserve(1000) // an owning handle to a 1000-byte slice
	if err != nil {
		panic(err)
	}
	b, _ := h.Binding() // what a kernel argument holds
	_ = b.Narrow(8, 0)  // a view that skips the first 8 bytes
	r, err := m.Resource(b)
	if err != nil {
		panic(err)
	}
	fmt.Println("view size:", r.Size, "offset in page:", r.Offset)

	_ = b.Release()
	_ = h.Release()
	fmt.Println("in use after release:", m.Usage().BytesInUse)
	m.Cleanup()
	fmt.Println("storage allocations left:", storage.Live())
	// Output:
	// view size: 992 offset in page: 8
	// in use after release: 0
	// storage allocations left: 0
}

// Reserve-then-bind: the client's handle exists before the memory does.
func ExampleManager_Bind() {
	m, _ := memory.New(memorytest.New(), memory.DeviceProps{MemoryTotal: 8 << 30, Alignment: 256})
	client := m.NewHandle(4096)
	reserved, _ := m.Reserve(4096)
	if err := m.Bind(&reserved, client, 1); err != nil {
		panic(err)
	}
	fmt.Println("reserved consumed:", !reserved.Valid())
	r, _ := m.HandleResource(client)
	fmt.Println("size:", r.Size)
	_ = client.Release()
	// Output:
	// reserved consumed: true
	// size: 4096
}

// Persistent windows nest; captures force the persistent mode and return
// the slices a graph must keep.
func ExampleManager_CaptureBegin() {
	m, _ := memory.New(memorytest.New(), memory.DeviceProps{MemoryTotal: 8 << 30, Alignment: 256})
	m.CaptureBegin()
	tmp, _ := m.Reserve(1 << 20) // warm-up
	_ = tmp.Release()
	m.CapturePrimingEnd()
	tmp, _ = m.Reserve(1 << 20) // the recorded run reuses the warmed slice
	_ = tmp.Release()
	graph := m.CaptureEnd()
	fmt.Println("pinned on the graph:", len(graph), "mode:", m.Mode())
	for i := range graph { // when the graph is destroyed
		_ = graph[i].Release()
	}
	// Output:
	// pinned on the graph: 1 mode: auto
}

// An explicit layout, and the refusal to install one while memory is live.
func ExampleManager_InstallLayout() {
	m, _ := memory.New(memorytest.New(), memory.DeviceProps{MemoryTotal: 8 << 30, Alignment: 256})
	h, _ := m.Reserve(1 << 20)
	layout := memory.Explicit(memory.SlicedSpec{PageSize: 8 << 20, MaxPoolSize: 16 << 20})
	fmt.Println(m.InstallLayout(layout))
	_ = h.Release()
	fmt.Println(m.InstallLayout(layout), m.Layout())
	// Output:
	// memory: pools in use: 1048576 bytes in 1 allocations
	// <nil> [sliced(page 8 MiB, slice 8 MiB, cap 16 MiB)]
}
