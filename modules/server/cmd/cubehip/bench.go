package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// figure is one budget: the Device's figure, the raw one it is held to, and the rule.
type figure struct {
	name, unit string
	anchorKey  string // the anchor program's name for the raw figure ("" if it has none)
	device     float64
	raw        float64 // measured in-process through hipsys, replaced by the anchor's
	// ratio, when set, is the median of paired rounds' device/raw ratios (bencher.paired),
	// the comparison the budget judges; device and raw are then each side's median.
	ratio   float64
	rawFrom string
	budget  func(device, raw float64) (ok bool, rule string)
	// twin names the figure that holds the same work to the anchor's loop run in C in
	// this process. Where the raw figure came from the anchor's own process, the twin
	// is the one judged: the same C loop runs several percent faster or slower from one
	// process to the next on the H200, so a comparison across processes measures the
	// processes as much as the Device.
	twin string
}

// runBench measures the Device budgets on the default device, each beside the same work
// done raw: straight through hipsys in this process, or, where the raw driver-API
// anchor program is given (-anchor, default build/gpu/anchor when present) and reports
// the figure, the anchor's.
func runBench(out io.Writer, args []string) error {
	fs := flags("bench")
	platform := fs.String("platform", "auto", "platform: auto, cpu, nvidia, amd")
	anchor := fs.String("anchor", "", "raw driver-API anchor program (default build/gpu/anchor if present)")
	scale := fs.Float64("scale", 1, "multiplies every loop count")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := hipsys.Open(*platform)
	if err != nil {
		return err
	}
	d, err := server.OpenPlatform(p, server.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer d.Close()
	fmt.Fprintf(out, "cubehip bench on %s device %d: %s, %s\n", d.Platform(), d.Index(), d.Props().Name, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	b := &bencher{d: d, p: p, scale: *scale, out: out}
	figs, err := b.measure()
	if err != nil {
		return err
	}
	// The anchor is a CUDA driver-API program: its figures are raw only for nvidia.
	if path := anchorPath(*anchor); path != "" && d.Platform() == "nvidia" {
		fmt.Fprintf(out, "running the anchor %s (3 runs) ...\n", path)
		got, err := runAnchor(path)
		if err != nil {
			fmt.Fprintf(out, "anchor: %v; the raw figures stay the in-process ones\n", err)
		}
		for i := range figs {
			if v, ok := got[figs[i].anchorKey]; ok {
				figs[i].raw, figs[i].rawFrom = v, "anchor"
			}
		}
	}
	return printFigures(out, figs, d.Platform() == "cpu")
}

func printFigures(out io.Writer, figs []figure, cpu bool) error {
	fmt.Fprintf(out, "\n%-22s %14s %14s %-7s  %s\n", "figure", "device", "raw", "raw by", "budget")
	failed := 0
	for _, f := range figs {
		if f.raw == 0 && f.anchorKey != "" {
			// Only the anchor, a process of its own, measures this figure's raw regime.
			fmt.Fprintf(out, "%-22s %9.3f %-4s %14s %-7s  needs the anchor (scripts/gpu-test.sh builds it)\n", f.name, f.device, short(f.unit), "-", "")
			continue
		}
		if f.twin != "" && f.rawFrom == "anchor" {
			if tw := find(figs, f.twin); tw != nil {
				fmt.Fprintf(out, "%-22s %9.3f %-4s %9.3f %-4s %-7s  another process (%+.1f%%): judged by %q, whose C loop ran %+.1f%% from the anchor's\n",
					f.name, f.device, short(f.unit), f.raw, short(f.unit), f.rawFrom, 100*(f.device/f.raw-1), f.twin, 100*(tw.raw/f.raw-1))
				continue
			}
		}
		dev := f.device
		if f.ratio > 0 {
			dev = f.ratio * f.raw // the device figure the paired ratio implies
		}
		ok, rule := f.budget(dev, f.raw)
		verdict := "ok"
		if !ok {
			verdict = "MISSED"
			failed++
		}
		raw := fmt.Sprintf("%9.3f %-4s", f.raw, short(f.unit))
		if f.raw == 0 {
			raw, f.rawFrom = fmt.Sprintf("%14s", "-"), ""
		}
		fmt.Fprintf(out, "%-22s %9.3f %-4s %s %-7s  %s: %s\n", f.name, f.device, short(f.unit), raw, f.rawFrom, rule, verdict)
	}
	if failed > 0 {
		fmt.Fprintf(out, "\n%d budget(s) missed on this device\n", failed)
		if cpu {
			// The cpu device's raw copies are plain memcpy and its raw launches a
			// queue push: the budgets are a GPU's, held against its driver.
			fmt.Fprintln(out, "(the budgets are set for a GPU against its driver; the cpu device's raw calls are host memcpy and queue pushes)")
		}
	}
	return nil
}

func find(figs []figure, name string) *figure {
	for i := range figs {
		if figs[i].name == name {
			return &figs[i]
		}
	}
	return nil
}

func short(unit string) string {
	if unit == "GB/s" {
		return "GB/s"
	}
	return "µs"
}

func within(pct float64) func(device, raw float64) (bool, string) {
	return func(device, raw float64) (bool, string) {
		return device <= raw*(1+pct/100), fmt.Sprintf("within %v%% of raw (%.1f%%)", pct, 100*(device/raw-1))
	}
}

func atLeast(times float64) func(device, raw float64) (bool, string) {
	return func(device, raw float64) (bool, string) {
		return device >= raw*times, fmt.Sprintf("at least %v× raw (%.2f×)", times, device/raw)
	}
}

// anchorPath is the anchor to run: the flag, else build/gpu/anchor or an anchor next to
// this binary when one exists.
func anchorPath(flag string) string {
	if flag != "" {
		return flag
	}
	candidates := []string{filepath.Join("build", "gpu", "anchor")}
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), "anchor"))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return c
		}
	}
	return ""
}

// runAnchor runs the anchor three times and reads its "anchor <name> <value> <unit>"
// lines, keeping each figure's best run (the lowest time, the highest GB/s): the same
// best of three that timed takes of the Device's figures, since one process's figures
// differ from the next's by up to 10% on the H200.
func runAnchor(path string) (map[string]float64, error) {
	got := map[string]float64{}
	for range 3 {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(path)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
		}
		sc := bufio.NewScanner(&stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 4 || f[0] != "anchor" {
				continue
			}
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				continue
			}
			old, seen := got[f[1]]
			if higher := f[3] == "GB/s"; !seen || (higher && v > old) || (!higher && v < old) {
				got[f[1]] = v
			}
		}
	}
	return got, nil
}
