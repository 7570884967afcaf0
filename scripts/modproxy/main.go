// Command modproxy builds what releasing cubehip's modules needs and the public proxy
// cannot give, because the modules' path (github.com/cubehip/cubehip/modules/...) is
// published nowhere until it is tagged: a file-based GOPROXY holding the modules at
// chosen versions, the workspace's modules in release order, and the version checks a
// Go module tag needs before it is created (a tag cannot be taken back).
//
// Usage:
//
//	modproxy publish -out DIR [-repo ROOT] SPEC...
//	    SPEC is MODDIR@VERSION (the module as the working tree has it: the files git
//	    tracks or would track) or MODDIR@VERSION=REV (as git revision REV has it, e.g.
//	    the tag modules/hipsys/v0.1.0). DIR becomes a proxy for GOPROXY=file://DIR.
//	modproxy modules [-repo ROOT]
//	    The workspace's modules (go.work), each after the siblings it requires: DIR PATH.
//	modproxy requires [-repo ROOT] MODDIR
//	    The workspace siblings MODDIR's go.mod requires: SIBLINGDIR VERSION.
//	modproxy version VERSION [RELEASED...]
//	    Fails unless VERSION can tag a module of ours and is newer than every RELEASED.
//
// It is its own module, outside go.work (run it with GOWORK=off), so that the released
// modules never require the tool's dependencies.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("missing command: publish, modules, requires or version")
	}
	fs := flag.NewFlagSet("modproxy "+args[0], flag.ContinueOnError)
	repo := fs.String("repo", ".", "the repository's root (where go.work is)")
	switch args[0] {
	case "publish":
		out := fs.String("out", "", "the proxy's directory (created if missing)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *out == "" || fs.NArg() == 0 {
			return fmt.Errorf("publish: needs -out DIR and at least one MODDIR@VERSION[=REV]")
		}
		for _, arg := range fs.Args() {
			spec, err := parseSpec(arg)
			if err != nil {
				return err
			}
			if err := publish(*out, *repo, spec); err != nil {
				return fmt.Errorf("publish %s: %w", arg, err)
			}
		}
		return nil
	case "modules":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		mods, err := loadWorkspace(*repo)
		if err != nil {
			return err
		}
		order, err := mods.releaseOrder()
		if err != nil {
			return err
		}
		for _, m := range order {
			fmt.Fprintln(stdout, m.Dir, m.Path)
		}
		return nil
	case "requires":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return fmt.Errorf("requires: needs exactly one MODDIR")
		}
		mods, err := loadWorkspace(*repo)
		if err != nil {
			return err
		}
		reqs, err := mods.siblingRequirements(fs.Arg(0))
		if err != nil {
			return err
		}
		for _, r := range reqs {
			fmt.Fprintln(stdout, r.Dir, r.Version)
		}
		return nil
	case "version":
		if len(args) < 2 {
			return fmt.Errorf("version: needs VERSION")
		}
		return checkVersion(args[1], args[2:])
	}
	return fmt.Errorf("unknown command %q: publish, modules, requires or version", args[0])
}
