package main

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	// na, when set, is why the figure cannot be measured here (a peer copy with one
	// device); it is shown as n/a with that reason.
	na string
	// cpu marks the cpu device's own figures (a kernel against its C loop,
	// bench_cpu.go; a peer copy against the host's memcpy): the only ones judged on the
	// cpu device.
	cpu bool
}

// runBench measures the Device budgets on the default device, each beside the same work
// done raw: straight through hipsys in this process, or, where the raw driver-API
// anchor program is given (-anchor, default build/gpu/anchor when present) and reports
// the figure, the anchor's.
func runBench(out io.Writer, args []string) error {
	fs := flags("bench", out)
	platform, device := deviceFlags(fs)
	asJSON := fs.Bool("json", false, "write the figures as a JSON array (progress goes nowhere)")
	anchor := fs.String("anchor", "", "raw driver-API anchor program (default build/gpu/anchor if present)")
	scale := fs.Float64("scale", 1, "multiplies every loop count")
	if done, err := parseNoArgs(fs, args); done {
		return err
	}
	p, err := hipsys.Open(*platform)
	if err != nil {
		return err
	}
	d, err := server.OpenPlatform(p, server.Options{Index: *device, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer d.Close()
	progress := out
	if *asJSON {
		progress = io.Discard
	}
	fmt.Fprintf(progress, "cubehip bench on %s device %d: %s, %s\n", d.Platform(), d.Index(), d.Props().Name, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	b := &bencher{d: d, p: p, scale: *scale, out: progress}
	figs, err := b.measure()
	if err != nil {
		return err
	}
	peer, err := b.peerCopy()
	if err != nil {
		return err
	}
	figs = append(figs, peer)
	if d.Platform() == "cpu" {
		cpu, err := b.cpuSection()
		if err != nil {
			return err
		}
		figs = append(figs, cpu...)
	}
	// The anchor is a CUDA driver-API program: its figures are raw only for nvidia.
	if path := anchorPath(*anchor); path != "" && d.Platform() == "nvidia" {
		fmt.Fprintf(progress, "running the anchor %s (3 runs) ...\n", path)
		got, err := runAnchor(path)
		if err != nil {
			fmt.Fprintf(progress, "anchor: %v; the raw figures stay the in-process ones\n", err)
		}
		for i := range figs {
			if v, ok := got[figs[i].anchorKey]; ok {
				figs[i].raw, figs[i].rawFrom = v, "anchor"
			}
		}
	}
	rows := judge(figs, d.Platform() == "cpu")
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
	} else {
		printRows(out, rows, d.Platform() == "cpu")
	}
	return missed(rows)
}

// row is one figure judged, as bench prints it and as bench -json writes it.
type row struct {
	Name    string  `json:"name"`
	Unit    string  `json:"unit"`
	Device  float64 `json:"device"`
	Raw     float64 `json:"raw,omitempty"`
	RawBy   string  `json:"raw_by,omitempty"`
	Budget  string  `json:"budget"`
	Verdict string  `json:"verdict"` // ok, MISSED, noiseVerdict (cpu only: not a failure), n/a (not judged here)
}

// judge holds each figure to its budget.
func judge(figs []figure, cpu bool) []row {
	var rows []row
	for _, f := range figs {
		r := row{Name: f.name, Unit: short(f.unit), Device: f.device, Raw: f.raw, RawBy: f.rawFrom}
		switch {
		case f.na != "":
			r.Budget, r.Verdict = f.na, "n/a"
		case f.raw == 0 && f.anchorKey != "":
			// Only the anchor, a process of its own, measures this figure's raw regime.
			r.Budget, r.Verdict = "needs the anchor (scripts/gpu-test.sh builds it)", "n/a"
		case cpu && !f.cpu:
			// A budget set for a GPU against its driver: on the cpu device the raw side is
			// a queue push, a host memcpy or a malloc, so the comparison means nothing.
			_, rule := f.budget(f.device, max(f.raw, 1e-12))
			r.Budget, r.Verdict = strings.Split(rule, " (")[0], "n/a"
		case f.twin != "" && f.rawFrom == "anchor" && find(figs, f.twin) != nil:
			tw := find(figs, f.twin)
			r.Budget = fmt.Sprintf("another process (%+.1f%%): judged by %q, whose C loop ran %+.1f%% from the anchor's", 100*(f.device/f.raw-1), f.twin, 100*(tw.raw/f.raw-1))
			r.Verdict = "n/a"
		default:
			dev := f.device
			if f.ratio > 0 {
				dev = f.ratio * f.raw // the device figure the paired ratio implies
			}
			ok, rule := f.budget(dev, f.raw)
			r.Budget, r.Verdict = rule, "ok"
			switch {
			case ok:
			case cpu && f.cpu && withinNoise(f, dev):
				r.Verdict = noiseVerdict
			default:
				r.Verdict = "MISSED"
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// cpuNoise is how far a cpu device's figure may miss its budget and be put down to
// noise: a kernel against its C loop on a shared host (other processes, frequency
// scaling, the other core's cache) moves by about this much between runs, so a miss
// within it is reported but does not fail the exit status. GPU budgets, measured in
// paired rounds on a quiet device, have no such margin.
const cpuNoise = 0.10

const noiseVerdict = "missed, within 10% (noise)"

// withinNoise is whether f's device figure dev would meet the budget were it cpuNoise
// better: 10% less time, or 10% more rate.
func withinNoise(f figure, dev float64) bool {
	if f.unit == "µs" {
		dev *= 1 - cpuNoise
	} else {
		dev /= 1 - cpuNoise
	}
	ok, _ := f.budget(dev, f.raw)
	return ok
}

// missed is an error counting the budgets missed, nil when none was.
func missed(rows []row) error {
	n := 0
	for _, r := range rows {
		if r.Verdict == "MISSED" {
			n++
		}
	}
	if n > 0 {
		return fmt.Errorf("%d budget(s) missed on this device", n)
	}
	return nil
}

func printRows(out io.Writer, rows []row, cpu bool) {
	fmt.Fprintf(out, "\n%-22s %14s %14s %-7s  %s\n", "figure", "device", "raw", "raw by", "budget")
	for _, r := range rows {
		raw := fmt.Sprintf("%9.3f %-4s", r.Raw, r.Unit)
		if r.Raw == 0 {
			raw = fmt.Sprintf("%14s", "-")
		}
		fmt.Fprintf(out, "%-22s %9.3f %-4s %s %-7s  %s: %s\n", r.Name, r.Device, r.Unit, raw, r.RawBy, r.Budget, r.Verdict)
	}
	if cpu {
		fmt.Fprintln(out, "\n(n/a: a budget set for a GPU against its driver; on the cpu device the raw calls are queue pushes and host memcpy;")
		fmt.Fprintln(out, " the cpu device is judged by its kernels against single-threaded C loops: at least 1× at 2 cores or fewer, 4× at 16 or more, in between on the line, the block scan a fifth of that;")
		fmt.Fprintln(out, " a miss within 10% of its budget is put down to noise: reported, and the exit status stays 0)")
	}
}

// printFigures judges figs and prints them; the error counts the budgets missed.
func printFigures(out io.Writer, figs []figure, cpu bool) error {
	rows := judge(figs, cpu)
	printRows(out, rows, cpu)
	return missed(rows)
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
// differ from the next's by more than a budget (docs/benchmarks.md, "Paired rounds:
// drift and the number of rounds").
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
