// Command hipinfo lists every platform's devices and then runs a kernel on the default
// one: it compiles saxpy with hiprtc, moves data, launches it, captures the launch into a
// graph and replays it, timing each step with device events, and checks every result
// against Go. On a machine with no GPU the default is the embedded cpu device.
//
//	go run ./modules/hipsys/cmd/hipinfo            # auto: amd, else nvidia, else cpu
//	CUBEHIP_PLATFORM=cpu go run ./modules/hipsys/cmd/hipinfo
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cubehip/cubehip/modules/hipsys"
	_ "github.com/cubehip/cubehip/modules/hipsys/platforms"
)

func main() {
	platform := flag.String("platform", "auto", "platform to run the kernel on: auto, cpu, nvidia, amd")
	n := flag.Int("n", 1<<20, "elements of the saxpy vectors")
	flag.Parse()

	listDevices(os.Stdout)
	p, err := hipsys.Open(*platform)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hipinfo:", err)
		os.Exit(1)
	}
	if err := runSaxpy(os.Stdout, p, *n); err != nil {
		fmt.Fprintln(os.Stderr, "hipinfo:", err)
		os.Exit(1)
	}
}
