package main

import (
	"fmt"
	"io"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// listDevices prints each registered platform, its devices and their properties, or why
// it has none: a missing vendor library is a normal answer on most machines, not a crash.
func listDevices(w io.Writer) {
	for _, name := range hipsys.Platforms() {
		p, err := hipsys.Open(name)
		if err != nil {
			fmt.Fprintf(w, "%-7s unavailable: %v\n", name, err)
			continue
		}
		count, err := p.GetDeviceCount()
		if err != nil {
			fmt.Fprintf(w, "%-7s no device: %v\n", name, err)
			continue
		}
		for d := 0; d < count; d++ {
			props, err := p.GetDeviceProperties(d)
			if err != nil {
				fmt.Fprintf(w, "%-7s device %d: %v\n", name, d, err)
				continue
			}
			fmt.Fprintf(w, "%-7s device %d: %s (%s)\n", name, d, props.Name, props.ArchName)
			fmt.Fprintf(w, "        %d compute units, warp %d, %d threads/block, %d KiB shared/block, %.1f GiB memory\n",
				props.MultiProcessorCount, props.WarpSize, props.MaxThreadsPerBlock,
				props.SharedMemPerBlock/1024, float64(props.TotalMem)/(1<<30))
		}
	}
}
