package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// deviceInfo is one device, or one platform's reason for having none, as devices -json
// writes it.
type deviceInfo struct {
	Platform string              `json:"platform"`
	Index    int                 `json:"index"`
	Props    *hipsys.DeviceProps `json:"props,omitempty"`
	Peers    []int               `json:"peers,omitempty"` // the devices it reaches directly (peer access)
	Error    string              `json:"error,omitempty"`
}

// runDevices prints each registered platform, its devices and their properties, or why it
// has none: a missing vendor library is a normal answer on most machines, not a failure,
// so the command fails only when no platform at all has a device. -json writes the same
// as one JSON array. -platform (other than auto) lists that platform alone, and -device
// that device alone, given before the command or after it alike.
func runDevices(out io.Writer, args []string) error {
	fs := flags("devices", out)
	asJSON := fs.Bool("json", false, "write a JSON array: one object per device, or per platform without one")
	platform, device := deviceFlags(fs)
	if done, err := parseNoArgs(fs, args); done {
		return err
	}
	// -device's default is 0, which would hide every other device: only a -device the
	// user gave (here or before the command) restricts the list.
	oneDevice := global.deviceSet
	fs.Visit(func(f *flag.Flag) { oneDevice = oneDevice || f.Name == "device" })
	if oneDevice && *device < 0 {
		return usageErr{fmt.Errorf("-device %d: an index is 0 or more", *device)}
	}
	var all []deviceInfo
	matrices := map[string][][]bool{} // platforms of two or more devices: their peer access
	found := 0
	for _, name := range hipsys.Platforms() {
		if *platform != "auto" && name != *platform {
			continue
		}
		p, err := hipsys.Open(name)
		if err != nil {
			all = append(all, deviceInfo{Platform: name, Index: -1, Error: "unavailable: " + err.Error()})
			continue
		}
		count, err := p.GetDeviceCount()
		if err != nil || count == 0 {
			all = append(all, deviceInfo{Platform: name, Index: -1, Error: fmt.Sprintf("no device: %v", err)})
			continue
		}
		var peers [][]bool
		if count > 1 {
			if peers, err = peerMatrix(p, count); err != nil {
				all = append(all, deviceInfo{Platform: name, Index: -1, Error: err.Error()})
			} else {
				matrices[name] = peers
			}
		}
		if oneDevice && *device >= count {
			all = append(all, deviceInfo{Platform: name, Index: *device, Error: fmt.Sprintf("no such device: the platform has %d", count)})
			continue
		}
		for d := 0; d < count; d++ {
			if oneDevice && d != *device {
				continue
			}
			props, err := p.GetDeviceProperties(d)
			if err != nil {
				all = append(all, deviceInfo{Platform: name, Index: d, Error: err.Error()})
				continue
			}
			found++
			di := deviceInfo{Platform: name, Index: d, Props: &props}
			if peers != nil {
				di.Peers = peersOf(peers, d)
			}
			all = append(all, di)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			return err
		}
	} else {
		for i, di := range all {
			switch {
			case di.Props != nil:
				printProps(out, di.Platform, di.Index, *di.Props)
			case di.Index < 0:
				fmt.Fprintf(out, "%s: %s\n", di.Platform, di.Error)
			default:
				fmt.Fprintf(out, "%s device %d: %s\n", di.Platform, di.Index, di.Error)
			}
			if m := matrices[di.Platform]; m != nil && (i+1 == len(all) || all[i+1].Platform != di.Platform) {
				printPeerMatrix(out, di.Platform, m)
			}
		}
	}
	switch {
	case found > 0:
		return nil
	case *platform != "auto" && oneDevice:
		return fmt.Errorf("platform %s has no device %d", *platform, *device)
	case *platform != "auto":
		return fmt.Errorf("platform %s has no device", *platform)
	case oneDevice:
		return fmt.Errorf("no platform has a device %d", *device)
	}
	return fmt.Errorf("no platform has a device")
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
