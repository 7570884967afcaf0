package server

import "github.com/cubehip/cubehip/modules/hipsys"

// LaunchTarget is what a Device launch of k on stream 0 reaches the driver with: the
// platform it was opened on, k's loaded function and stream 0's device stream.
// For benchmarks that split the Device's cost from the driver's (BenchmarkLayers).
func LaunchTarget(d *Device, k *Kernel) (hipsys.Platform, hipsys.Function, hipsys.Stream, error) {
	if err := d.enter(); err != nil {
		return nil, 0, 0, err
	}
	defer d.leave()
	fn, err := d.srv.Compile(k.k)
	if err != nil {
		return nil, 0, 0, err
	}
	st, err := d.srv.Streams().Stream(0)
	if err != nil {
		return nil, 0, 0, err
	}
	return d.srv.Platform(), fn, st.Sys, nil
}
