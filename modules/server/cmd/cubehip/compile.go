package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/amd"
	"github.com/cubehip/cubehip/modules/server"
)

// compileResult is one compile, as compile -json writes it: an entry of a file for a
// device (into the kernel disk cache), or a whole file for an AMD architecture (into a
// code object file).
type compileResult struct {
	File     string  `json:"file"`
	Entry    string  `json:"entry,omitempty"`  // device compiles: the kernel compiled and loaded
	Platform string  `json:"platform"`         // the platform compiled for
	Arch     string  `json:"arch"`             // the device's or the named architecture
	Output   string  `json:"output,omitempty"` // the module's code written (-offload-arch, or -o for a device): no entry
	OK       bool    `json:"ok"`               // compiled (and, for a device, loaded)
	Log      string  `json:"log,omitempty"`    // the compiler's log: its errors, or its warnings
	Error    string  `json:"error,omitempty"`  // why it failed
	Seconds  float64 `json:"seconds"`          // wall time of the compile
}

// listFlag is a flag that may be given several times, or once with commas.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// optionFlag collects compiler options one per flag, commas and all (-opt=-DN=4,5 is one
// option).
type optionFlag []string

func (o *optionFlag) String() string { return strings.Join(*o, " ") }
func (o *optionFlag) Set(v string) error {
	*o = append(*o, v)
	return nil
}

// kernelEntry finds the kernels a source declares: `extern "C" __global__` functions,
// the only ones a program can look up by name (a C++ name is mangled).
var kernelEntry = regexp.MustCompile(`extern\s+"C"\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\(`)

// comgrSource is the name AMD's compiler gives the source in its log (a temporary
// directory's input/CompileSource): the user knows it by its file.
var comgrSource = regexp.MustCompile(`\S*comgr-[^/\s]*/input/CompileSource`)

// runCompile compiles kernel source files ahead of time. For the chosen device, each
// entry (-entry, or every `extern "C" __global__` function of the file) is compiled and
// loaded as a launch would, so its code lands in the kernel disk cache and the first
// launch of a later process loads it without compiling; with -o, each file's whole module
// is also written as the device's code (a module file). With -offload-arch, each file is
// compiled by hiprtc for each named AMD architecture into a code object file, without a
// GPU. Each result is printed with the compiler's log; any failure makes the command fail.
func runCompile(out io.Writer, args []string) error {
	fs := flags("compile", out)
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: cubehip compile [flags] FILE...")
		fmt.Fprintln(out, "Compiles HIP C++ kernel files: for the device into the kernel disk cache (and with -o into module files), or with -offload-arch into AMD code objects without a GPU.")
		fs.PrintDefaults()
	}
	platform, device := deviceFlags(fs)
	var entries, archs listFlag
	var options optionFlag
	fs.Var(&entries, "entry", "kernel entry point to compile (repeat or comma-separate; default: every extern \"C\" __global__ function of the file)")
	fs.Var(&archs, "offload-arch", "AMD architectures to compile for without a device, e.g. gfx90a,gfx1100 (code objects written to -o)")
	fs.Var(&options, "opt", "a compiler option, e.g. -opt=-DN=4 (repeat for several)")
	outDir := fs.String("o", ".", "the directory each file's module code is written to, as FILE-BASE.ARCH.co (made if missing): always with -offload-arch; for the device when given, the code its ModuleLoadData takes (a module file: RawModule(path=...), ReadModuleFile)")
	cacheDir := fs.String("cache-dir", "", "kernel disk cache: \"\" the default ($CUBEHIP_CACHE_DIR or the user cache dir)")
	asJSON := fs.Bool("json", false, "write a JSON array: one object per compile")
	if done, err := parse(fs, args); done {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		return errors.New("no source file given (usage: cubehip compile [flags] FILE...)")
	}
	if len(archs) > 0 && len(entries) > 0 {
		// A code object holds every kernel of its file: there is no entry to choose.
		return errors.New("-entry names a kernel to compile for the device; -offload-arch compiles the whole file")
	}
	outGiven := false
	fs.Visit(func(f *flag.Flag) { outGiven = outGiven || f.Name == "o" })
	var results []compileResult
	var err error
	if len(archs) > 0 || outGiven {
		// -o names where the code objects go: made if missing, as a compiler's -o would.
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			return fmt.Errorf("-o %s: %w", *outDir, err)
		}
	}
	if len(archs) > 0 {
		results, err = compileForArchs(files, archs, options, *outDir)
	} else {
		moduleDir := ""
		if outGiven {
			moduleDir = *outDir
		}
		results, err = compileForDevice(files, entries, options, *platform, *device, *cacheDir, moduleDir)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return err
		}
	} else {
		printCompiles(out, results)
	}
	failed := 0
	for _, r := range results {
		if !r.OK {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d compiles failed", failed, len(results))
	}
	return nil
}

// compileForDevice compiles every entry of every file on the device, through the
// Device's own compile (the kernel caches included). With a moduleDir, each file's whole
// module is also written there as code, one more result (no entry) per file.
func compileForDevice(files, entries, options []string, platform string, index int, cacheDir, moduleDir string) ([]compileResult, error) {
	sources := make([]string, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sources[i] = string(b)
	}
	d, err := server.Open(server.Options{Platform: platform, Index: index, CacheDir: cacheDir})
	if err != nil {
		return nil, err
	}
	defer d.Close()
	arch := d.Props().ArchName
	var results []compileResult
	for i, f := range files {
		names := entries
		if len(names) == 0 {
			names = entriesOf(sources[i])
		}
		if len(names) == 0 {
			results = append(results, compileResult{File: f, Platform: d.Platform(), Arch: arch,
				Error: `no kernel found: the file declares no extern "C" __global__ function (name one with -entry)`})
			continue
		}
		for _, e := range names {
			r := compileResult{File: f, Entry: e, Platform: d.Platform(), Arch: arch}
			k := server.DefineKernel(sources[i], e, server.CompilerOptions(options...))
			start := time.Now()
			err := d.Compile(k)
			r.Seconds = time.Since(start).Seconds()
			r.OK = err == nil
			var ce *server.CompileError
			switch {
			case errors.As(err, &ce):
				// The compiler names the source after the entry: the user knows it by its file.
				r.Log = strings.ReplaceAll(ce.Log, e+".hip:", filepath.Base(f)+":")
				r.Error = "compile error (" + ce.Compiler + ")"
			case err != nil:
				r.Error = err.Error()
			}
			results = append(results, r)
		}
		if moduleDir != "" {
			results = append(results, writeModuleCode(d, f, sources[i], options, arch, moduleDir))
		}
	}
	return results, nil
}

// writeModuleCode writes the code of file's module (source compiled with options) for
// d to dir as FILE-BASE.ARCH.co: the bytes d's ModuleLoadData takes, so that a later
// process loads the file as a module without compiling (server.ReadModuleFile).
func writeModuleCode(d *server.Device, file, source string, options []string, arch, dir string) compileResult {
	r := compileResult{File: file, Platform: d.Platform(), Arch: arch}
	start := time.Now()
	code, err := d.ModuleCode(server.NewModule(source, options...))
	r.Seconds = time.Since(start).Seconds()
	var ce *server.CompileError
	switch {
	case errors.As(err, &ce):
		r.Log = strings.ReplaceAll(ce.Log, "module.hip:", filepath.Base(file)+":")
		r.Error = "compile error (" + ce.Compiler + ")"
		return r
	case err != nil:
		r.Error = err.Error()
		return r
	}
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	r.Output = filepath.Join(dir, base+"."+archFileName(arch)+".co")
	if err := os.WriteFile(r.Output, code, 0o644); err != nil {
		r.Output, r.Error = "", err.Error()
		return r
	}
	r.OK = true
	return r
}

// archFileName is an architecture as part of a file name: a target's features
// ("gfx90a:sramecc+:xnack-") keep their signs, their colons become underscores.
func archFileName(arch string) string {
	return strings.NewReplacer(":", "_", "/", "_", " ", "_").Replace(arch)
}

// compileForArchs compiles each file for each AMD architecture with hiprtc, no device
// needed, and writes the code objects to dir.
func compileForArchs(files, archs, options []string, dir string) ([]compileResult, error) {
	var results []compileResult
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		base := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		for _, a := range archs {
			r := compileResult{File: f, Platform: "amd", Arch: a}
			start := time.Now()
			code, log, err := amd.CompileFor(a, string(src), filepath.Base(f), options)
			r.Seconds = time.Since(start).Seconds()
			r.Log = log
			if err != nil {
				r.Error = err.Error()
				var he *hipsys.Error
				if errors.As(err, &he) {
					// The log is printed apart: the error line names the failure only.
					status := error(he.Status)
					if he.RTCStatus != hipsys.RTCSuccess {
						status = he.RTCStatus
					}
					r.Error = fmt.Sprintf("%s: %v", he.Call, status)
					if r.Log == "" {
						r.Log = he.Detail
					}
					r.Log = comgrSource.ReplaceAllString(r.Log, filepath.Base(f))
				}
				results = append(results, r)
				continue
			}
			r.Output = filepath.Join(dir, base+"."+archFileName(a)+".co")
			if err := os.WriteFile(r.Output, code, 0o644); err != nil {
				r.Output, r.Error = "", err.Error()
			} else {
				r.OK = true
			}
			results = append(results, r)
		}
	}
	return results, nil
}

// entriesOf lists the kernels src declares, in order, each once.
func entriesOf(src string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range kernelEntry.FindAllStringSubmatch(src, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// printCompiles prints one line per result and the compiler's log under it, once per
// source: each entry of a file is compiled from the whole file, so an error in it fails
// every entry with the same log, which printed once per entry would bury the next file's
// results under copies. -json keeps each result's log, so a program reading one result
// has all of it.
func printCompiles(out io.Writer, results []compileResult) {
	printed := map[[2]string]string{} // {file, log} -> the entry (or architecture) it was printed under
	for _, r := range results {
		what := r.File
		if r.Entry != "" {
			what += " " + r.Entry
		}
		target := r.Platform + " " + r.Arch
		log := strings.TrimRight(r.Log, "\n")
		if strings.TrimSpace(log) == "" {
			log = ""
		}
		same, seen := printed[[2]string{r.File, log}]
		if log != "" && !seen {
			label := r.Entry // a device compile: the file's first entry with this log
			if label == "" {
				label = r.Arch // -offload-arch: its first architecture
			}
			printed[[2]string{r.File, log}] = label
		}
		note := ""
		if log != "" && seen {
			note = " (the same compiler log as " + same + ", above)"
		}
		switch {
		case r.OK && r.Output != "":
			fmt.Fprintf(out, "%s for %s: ok, %s (%.2f s)%s\n", what, target, r.Output, r.Seconds, note)
		case r.OK:
			fmt.Fprintf(out, "%s for %s: ok, in the kernel cache (%.2f s)%s\n", what, target, r.Seconds, note)
		default:
			fmt.Fprintf(out, "%s for %s: FAILED: %s%s\n", what, target, r.Error, note)
		}
		if log != "" && !seen {
			for line := range strings.Lines(log) {
				fmt.Fprintf(out, "    %s", line)
			}
			fmt.Fprintln(out)
		}
	}
}
