package main

import (
	"fmt"
	"io"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// runDevices prints each registered platform, its devices and their properties, or why it
// has none: a missing vendor library is a normal answer on most machines, not a failure,
// so the command fails only when no platform at all has a device.
func runDevices(out io.Writer, args []string) error {
	if err := flags("devices").Parse(args); err != nil {
		return err
	}
	found := 0
	for _, name := range hipsys.Platforms() {
		p, err := hipsys.Open(name)
		if err != nil {
			fmt.Fprintf(out, "%s: unavailable: %v\n", name, err)
			continue
		}
		count, err := p.GetDeviceCount()
		if err != nil || count == 0 {
			fmt.Fprintf(out, "%s: no device: %v\n", name, err)
			continue
		}
		for d := 0; d < count; d++ {
			props, err := p.GetDeviceProperties(d)
			if err != nil {
				fmt.Fprintf(out, "%s device %d: %v\n", name, d, err)
				continue
			}
			found++
			printProps(out, name, d, props)
		}
	}
	if found == 0 {
		return fmt.Errorf("no platform has a device")
	}
	return nil
}

func printProps(out io.Writer, platform string, d int, p hipsys.DeviceProps) {
	fmt.Fprintf(out, "%s device %d: %s\n", platform, d, p.Name)
	row := func(k string, v any) { fmt.Fprintf(out, "    %-22s %v\n", k, v) }
	row("architecture", p.ArchName)
	row("compute capability", fmt.Sprintf("%d.%d", p.Major, p.Minor))
	row("memory", fmt.Sprintf("%.1f GiB", float64(p.TotalMem)/(1<<30)))
	row("compute units", p.MultiProcessorCount)
	row("clock", fmt.Sprintf("%d MHz", p.ClockRateKHz/1000))
	row("warp size", p.WarpSize)
	row("threads per block", p.MaxThreadsPerBlock)
	row("block dims", p.MaxThreadsDim)
	row("grid dims", p.MaxGridSize)
	row("shared per block", fmt.Sprintf("%d KiB", p.SharedMemPerBlock/1024))
	row("registers per block", p.RegsPerBlock)
	row("L2 cache", fmt.Sprintf("%d KiB", p.L2CacheSize/1024))
	row("integrated", p.Integrated)
	row("concurrent kernels", p.ConcurrentKernels)
	if p.PCIBusID != 0 || p.PCIDeviceID != 0 {
		row("PCI", fmt.Sprintf("%04x:%02x:%02x", p.PCIDomainID, p.PCIBusID, p.PCIDeviceID))
	}
}
