// Command cubehip is cubehip's command line:
//
//	cubehip [-platform P] [-device N] <command> [flags]
//
//	devices    every platform, its devices and their properties (-json); -platform
//	           and -device restrict the list
//	compile    compile kernel files ahead of time: each entry for the chosen device
//	           (into the kernel disk cache), or with -offload-arch for AMD architectures
//	           into code object files, without a GPU; prints the compiler's log (-json)
//	demo       the main job on the chosen device: compile, copy, launch, capture and
//	           replay a graph, profile, report memory, and catch an injected failure on
//	           exactly the buffers it touched
//	bench      the Device-level budgets on the chosen device, each beside the same work
//	           done raw (-json); exits 1 when a budget is missed (on the cpu device,
//	           by more than 10%)
//	cache      the kernel disk cache: its directory, size and entries by kind;
//	           cache clear empties it
//	version    the command's version, Go version and registered platforms
//	help CMD   a command's flags
//
// The device is device -device (default 0) of -platform (default auto: $CUBEHIP_PLATFORM,
// else the first of amd, nvidia and cpu that has a device). On a machine with no GPU it is
// the embedded cpu device. Both flags are also accepted after each command that uses a
// device (devices, compile, demo, bench), and mean the same there.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// command is one subcommand: it parses its own flags from args and writes its report to
// out. An error ends the process with status 1; the report already written stays.
type command struct {
	name, summary string
	run           func(out io.Writer, args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"devices", "list every platform, its devices and their properties", runDevices},
		{"compile", "compile kernel files ahead of time: into the kernel cache, or AMD code objects", runCompile},
		{"demo", "compile, copy, launch, capture, profile, report memory and catch a failure", runDemo},
		{"bench", "measure the Device budgets on the chosen device", runBench},
		{"cache", "show the kernel disk cache (directory, size, entries by kind); cache clear empties it", runCache},
		{"version", "print the version, the Go version and the registered platforms", runVersion},
	}
}

// global is what the flags before the command chose: the defaults of each command's
// own -platform and -device. deviceSet says -device was given, which devices needs: its
// list is restricted only by a -device the user gave, not by the default 0.
var global = struct {
	platform  string
	device    int
	deviceSet bool
}{platform: "auto"}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command line: the exit status of args (0 ok or help, 1 a command that
// failed, 2 a usage error).
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cubehip", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&global.platform, "platform", "auto", "platform: auto, cpu, nvidia, amd")
	fs.IntVar(&global.device, "device", 0, "device index on the platform")
	global.deviceSet = false
	// A test runs the command line many times in one process: what one run's flags set
	// must not restrict the next run's devices.
	defer func() { global.deviceSet = false }()
	err := fs.Parse(args)
	fs.Visit(func(f *flag.Flag) { global.deviceSet = global.deviceSet || f.Name == "device" })
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "cubehip: %v\n", err)
		usage(stderr)
		return 2
	}
	args = fs.Args()
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if err := checkPlatform(global.platform); err != nil {
		fmt.Fprintf(stderr, "cubehip: %v\n", err)
		return 2
	}
	name, args := args[0], args[1:]
	if name == "help" {
		if len(args) == 0 {
			usage(stdout)
			return 0
		}
		c := findCommand(args[0])
		if c == nil {
			fmt.Fprintf(stderr, "cubehip help: unknown command %q\n", args[0])
			return 2
		}
		_ = c.run(stdout, []string{"-h"})
		return 0
	}
	c := findCommand(name)
	if c == nil {
		fmt.Fprintf(stderr, "cubehip: unknown command %q\n", name)
		usage(stderr)
		return 2
	}
	// A command's -h prints its flags on stdout and is not a failure.
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			_ = c.run(stdout, []string{"-h"})
			return 0
		}
	}
	if err := c.run(stdout, args); err != nil {
		fmt.Fprintf(stderr, "cubehip %s: %v\n", name, err)
		if usageError(err) {
			return 2
		}
		return 1
	}
	return 0
}

// usageErr is an error of the command line (a flag, an argument, a -platform), which
// exits 2 as the flags before the command do, rather than 1 for a command that failed.
type usageErr struct{ error }

func (e usageErr) Unwrap() error { return e.error }

func usageError(err error) bool {
	var u usageErr
	return errors.As(err, &u)
}

func findCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: cubehip [-platform P] [-device N] <command> [flags]")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "  help CMD a command's flags")
	fmt.Fprintln(w, "-platform is auto (CUBEHIP_PLATFORM, else amd, else nvidia, else cpu), cpu, nvidia or amd; -device is the device's index.")
}

// flags is a subcommand's flag set, reporting parse errors as errors rather than
// exiting, so a subcommand can be run from a test; -h prints its flags to out and
// returns flag.ErrHelp, which the command returns as nil.
func flags(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("cubehip "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		// What the command does before its flags: help is where a user learns it.
		fmt.Fprintf(out, "usage: cubehip %s [flags]\n", name)
		if c := findCommand(name); c != nil {
			fmt.Fprintln(out, c.summary)
		}
		fs.PrintDefaults()
	}
	return fs
}

// deviceFlags adds -platform and -device to fs, defaulting to the global ones.
func deviceFlags(fs *flag.FlagSet) (platform *string, device *int) {
	return fs.String("platform", global.platform, "platform: auto, cpu, nvidia, amd"),
		fs.Int("device", global.device, "device index on the platform")
}

// parse parses args into fs; done is true when the command should stop with err (nil
// for -h, which printed the flags). A parse error is only returned: the command line
// prints it once, where the flag package would print it and the usage besides. A
// -platform that names no platform is an error here, before any device is opened.
func parse(fs *flag.FlagSet, args []string) (done bool, err error) {
	usage, w := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err = fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(w)
	if errors.Is(err, flag.ErrHelp) {
		usage()
		return true, nil
	}
	if err != nil {
		return true, usageErr{fmt.Errorf("%w (cubehip help %s lists the flags)", err, strings.TrimPrefix(fs.Name(), "cubehip "))}
	}
	if p := fs.Lookup("platform"); p != nil {
		if err := checkPlatform(p.Value.String()); err != nil {
			return true, err
		}
	}
	return false, nil
}

// parseNoArgs is parse for a command that takes flags only: anything left over is an
// error, not silently ignored.
func parseNoArgs(fs *flag.FlagSet, args []string) (done bool, err error) {
	if done, err := parse(fs, args); done {
		return done, err
	}
	if fs.NArg() > 0 {
		return true, usageErr{fmt.Errorf("unexpected arguments %q: %s takes flags only", fs.Args(), fs.Name())}
	}
	return false, nil
}

// platforms are the values -platform takes.
var platforms = []string{"auto", "cpu", "nvidia", "amd"}

func checkPlatform(p string) error {
	if slices.Contains(platforms, p) {
		return nil
	}
	return usageErr{fmt.Errorf("-platform %q: not a platform (one of %s)", p, strings.Join(platforms, ", "))}
}
