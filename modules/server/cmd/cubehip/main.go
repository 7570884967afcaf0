// Command cubehip is cubehip's command line:
//
//	cubehip devices          every platform, its devices and their properties
//	cubehip demo             the main job on the default device: compile, copy, launch,
//	                         capture and replay a graph, profile, report memory, and catch
//	                         an injected failure on exactly the buffers it touched
//	cubehip bench            the Device-level budgets (launch, alloc+free, round trip,
//	                         graph replay, 256 MiB copies) on the default device
//
// The default device is the first of amd, nvidia and cpu that has one; -platform or
// CUBEHIP_PLATFORM chooses another. On a machine with no GPU it is the embedded cpu device.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	_ "github.com/cubehip/cubehip/modules/hipsys/platforms"
)

// command is one subcommand: it parses its own flags from args and writes its report to
// out. An error ends the process with status 1; the report already written stays.
type command struct {
	name, summary string
	run           func(out io.Writer, args []string) error
}

var commands = []command{
	{"devices", "list every platform, its devices and their properties", runDevices},
	{"demo", "compile, copy, launch, capture, profile, report memory and catch a failure", runDemo},
	{"bench", "measure the Device budgets on the default device", runBench},
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	name, args := os.Args[1], os.Args[2:]
	for _, c := range commands {
		if c.name != name {
			continue
		}
		if err := c.run(os.Stdout, args); err != nil {
			fmt.Fprintf(os.Stderr, "cubehip %s: %v\n", name, err)
			os.Exit(1)
		}
		return
	}
	if name == "help" || name == "-h" || name == "--help" {
		usage(os.Stdout)
		return
	}
	fmt.Fprintf(os.Stderr, "cubehip: unknown command %q\n", name)
	usage(os.Stderr)
	os.Exit(2)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: cubehip <command> [flags]")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "The platform is auto (amd, else nvidia, else cpu) unless -platform or CUBEHIP_PLATFORM says otherwise.")
}

// flags is a subcommand's flag set, reporting parse errors as errors rather than exiting,
// so a subcommand can be run from a test.
func flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("cubehip "+name, flag.ContinueOnError)
	return fs
}
