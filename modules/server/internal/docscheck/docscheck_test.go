package docscheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The documents checked: the whole of the architecture map, and the one section of the
// README that lays the modules out.
const (
	archDoc       = "docs/architecture.md"
	readme        = "README.md"
	layoutSection = "## Layout"
)

// repoRoot is the repository's top directory, found upward from the package's: the
// one holding go.work and the architecture map. A module copy outside the repository
// has neither, and the test skips there.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if isFile(filepath.Join(dir, "go.work")) && isFile(filepath.Join(dir, filepath.FromSlash(archDoc))) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("not inside the cubehip repository (no go.work and " + archDoc + " above this package): nothing to check")
		}
		dir = parent
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ref is one path-like name a document gives, and where.
type ref struct {
	doc   string
	line  int
	token string
}

func (r ref) String() string { return r.doc + ":" + strconv.Itoa(r.line) + ": `" + r.token + "`" }

var backquoted = regexp.MustCompile("`([^`\n]+)`")

// refs gives the backquoted names of lines (1-based from first), and, inside fenced
// blocks (the architecture map's layer diagram), every word that starts with one of the
// repository's top-level directories and a slash.
func refs(doc string, first int, lines []string, top map[string]bool) []ref {
	var out []ref
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			for _, w := range strings.Fields(l) {
				w = strings.Trim(w, ",.;:()")
				if seg, _, ok := strings.Cut(w, "/"); ok && top[seg] {
					out = append(out, ref{doc, first + i, w})
				}
			}
			continue
		}
		for _, m := range backquoted.FindAllStringSubmatch(l, -1) {
			out = append(out, ref{doc, first + i, m[1]})
		}
	}
	return out
}

// fileExts are the endings that make a backquoted name a file name even without a
// directory: the kinds of file this repository holds and its documents cite.
var fileExts = map[string]bool{
	".go": true, ".c": true, ".h": true, ".hpp": true, ".cpp": true, ".py": true,
	".sh": true, ".md": true, ".toml": true, ".yml": true, ".yaml": true, ".hip": true,
}

// pathLike says whether a backquoted name stands for a file or directory of the
// repository: a name ending in one of fileExts, or a slashed name whose first element
// is a directory the documents abbreviate from (the repository's top level, a module,
// a directory of the server module). Code (`dev.Launch(k, grid, ...)`), Go identifiers
// (`compute.Config.Owner`), standard packages (`database/sql`) and patterns
// (`modules/<name>/vX.Y.Z`) are not.
func pathLike(tok string, roots map[string]bool) bool {
	if tok == "" || strings.ContainsAny(tok, " <>{}()[]*$=,;:'\"|\\") {
		return false
	}
	tok = strings.TrimSuffix(tok, "/")
	if fileExts[path.Ext(tok)] && !strings.HasPrefix(path.Base(tok), ".") {
		return true
	}
	seg, _, slashed := strings.Cut(tok, "/")
	return slashed && roots[seg]
}

// resolve gives the path tok names, relative to the repository's top, modules/ or
// modules/server/ (the documents write `stream/quick.go` for modules/stream/quick.go
// and `compute/read.go` for modules/server/compute/read.go); a bare file name resolves
// to any file of that name in the tree. "" when it names nothing.
func resolve(root, tok string, byName map[string]string) string {
	tok = strings.TrimSuffix(tok, "/")
	for _, base := range []string{"", "modules", "modules/server"} {
		rel := path.Join(base, tok)
		if exists(filepath.Join(root, filepath.FromSlash(rel))) {
			return rel
		}
	}
	if !strings.Contains(tok, "/") {
		return byName[tok]
	}
	return ""
}

// subdirs are the names of dir's directories, but hidden ones.
func subdirs(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// filesByName maps each file name in the tree to one path that has it, for the bare
// names a document gives.
func filesByName(t *testing.T, root string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "build" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if _, ok := out[d.Name()]; !ok {
			rel, _ := filepath.Rel(root, p)
			out[d.Name()] = filepath.ToSlash(rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readLines(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// section is the lines of the section headed by heading, up to the next heading of
// its level, and the line number of the first of them.
func section(lines []string, heading string) ([]string, int, bool) {
	level := heading[:strings.IndexByte(heading, ' ')+1]
	for i, l := range lines {
		if strings.TrimSpace(l) != heading {
			continue
		}
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], level) {
				end = j
				break
			}
		}
		return lines[i+1 : end], i + 2, true
	}
	return nil, 0, false
}

// TestDocumentedPathsExist checks that every file and directory the architecture map
// and the README's Layout section name exists in the tree.
func TestDocumentedPathsExist(t *testing.T) {
	root := repoRoot(t)
	top := make(map[string]bool)
	roots := make(map[string]bool)
	for _, d := range subdirs(t, root) {
		top[d], roots[d] = true, true
	}
	for _, d := range subdirs(t, filepath.Join(root, "modules")) {
		roots[d] = true
	}
	for _, d := range subdirs(t, filepath.Join(root, "modules", "server")) {
		roots[d] = true
	}

	arch := readLines(t, filepath.Join(root, filepath.FromSlash(archDoc)))
	all := refs(archDoc, 1, arch, top)
	layout, first, ok := section(readLines(t, filepath.Join(root, readme)), layoutSection)
	if !ok {
		t.Fatalf("%s has no %q section: the test reads the modules' layout there", readme, layoutSection)
	}
	all = append(all, refs(readme, first, layout, top)...)

	byName := filesByName(t, root)
	checked := map[string]int{}
	for _, r := range all {
		if !pathLike(r.token, roots) {
			continue
		}
		checked[r.doc]++
		if resolve(root, r.token, byName) == "" {
			t.Errorf("%v names no file or directory of the repository (looked under the top, modules/ and modules/server/): a stale path, fix the document", r)
		}
	}
	// A parse that finds next to nothing would pass vacuously: both documents name
	// many paths.
	if checked[archDoc] < 30 || checked[readme] < 5 {
		t.Errorf("found only %d paths in %s and %d in %s's %s section: the scan no longer reads them", checked[archDoc], archDoc, checked[readme], readme, layoutSection)
	}
}

// goPackage is what go list -json reports of one package, as far as the rules need.
type goPackage struct {
	ImportPath   string
	Dir          string
	Imports      []string
	TestImports  []string
	XTestImports []string
	CgoFiles     []string
	Error        *struct{ Err string }
}

type goModule struct {
	Path string
	Dir  string
}

// goCommand is the go command, or the test skips.
func goCommand(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if g := os.Getenv("GOROOT"); g != "" {
		if p := filepath.Join(g, "bin", "go"); isFile(p) {
			return p
		}
	}
	t.Skip("no go command: the import rules are read from go list")
	return ""
}

// goList runs the go command in the workspace at root and returns its stdout. The
// workspace is named outright (a caller may have turned it off, as the release script
// does to test one module alone), and a -mod flag, which workspace mode refuses, is
// dropped.
func goList(t *testing.T, goCmd, root string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(goCmd, append([]string{"list"}, args...)...)
	cmd.Dir = root
	var env []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GOWORK", "CGO_ENABLED":
			continue
		case "GOFLAGS":
			var keep []string
			for _, f := range strings.Fields(v) {
				if !strings.HasPrefix(f, "-mod=") {
					keep = append(keep, f)
				}
			}
			kv = "GOFLAGS=" + strings.Join(keep, " ")
		}
		env = append(env, kv)
	}
	// CgoFiles lists the cgo files only when cgo is on.
	cmd.Env = append(env, "GOWORK="+filepath.Join(root, "go.work"), "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

func decodeAll[T any](t *testing.T, b []byte) []T {
	t.Helper()
	var out []T
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var v T
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
}

// workspace lists the packages of the workspace's modules (those under modules/),
// each named by its directory under modules/ ("server/compute"), with its imports of
// the workspace's packages named the same way.
type workspace struct {
	names   []string            // every package, sorted
	prod    map[string][]string // the package's own imports of ours
	all     map[string][]string // with its tests' (the package itself left out)
	cgo     map[string][]string // its cgo files
	modules map[string]bool     // the module names: hipsys, memory, stream, server, capi
}

func loadWorkspace(t *testing.T, root string) *workspace {
	t.Helper()
	goCmd := goCommand(t)
	mods := decodeAll[goModule](t, goList(t, goCmd, root, "-m", "-json"))
	modsDir := filepath.Join(root, "modules") + string(filepath.Separator)
	w := &workspace{prod: map[string][]string{}, all: map[string][]string{}, cgo: map[string][]string{}, modules: map[string]bool{}}
	var paths []string
	name := map[string]string{} // module path -> its name under modules/
	for _, m := range mods {
		if !strings.HasPrefix(m.Dir+string(filepath.Separator), modsDir) {
			continue
		}
		rel, _ := filepath.Rel(filepath.Join(root, "modules"), m.Dir)
		name[m.Path] = filepath.ToSlash(rel)
		w.modules[filepath.ToSlash(rel)] = true
		paths = append(paths, m.Path+"/...")
	}
	if len(paths) == 0 {
		t.Fatalf("go list -m found no module under %s: is go.work's use list empty?", modsDir)
	}
	ours := func(ip string) string {
		for p, n := range name {
			if ip == p {
				return n
			}
			if rest, ok := strings.CutPrefix(ip, p+"/"); ok {
				return n + "/" + rest
			}
		}
		return ""
	}
	args := append([]string{"-e", "-json=ImportPath,Dir,Imports,TestImports,XTestImports,CgoFiles,Error"}, paths...)
	for _, p := range decodeAll[goPackage](t, goList(t, goCmd, root, args...)) {
		n := ours(p.ImportPath)
		if n == "" {
			continue
		}
		if p.Error != nil {
			// A package that does not load (another change under way) still lists the
			// imports of the files that parse; the build and its own tests judge the rest.
			t.Logf("go list: %s: %s", n, p.Error.Err)
		}
		w.names = append(w.names, n)
		for _, ip := range p.Imports {
			if o := ours(ip); o != "" {
				w.prod[n] = append(w.prod[n], o)
			}
		}
		seen := map[string]bool{n: true}
		for _, ip := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if o := ours(ip); o != "" && !seen[o] {
				seen[o] = true
				w.all[n] = append(w.all[n], o)
			}
		}
		w.cgo[n] = p.CgoFiles
	}
	sort.Strings(w.names)
	for _, want := range []string{"hipsys", "memory", "stream", "server", "server/compute", "server/cmd/cubehip", "capi"} {
		if !slices.Contains(w.names, want) {
			t.Fatalf("go list did not report package %s; found %v", want, w.names)
		}
	}
	return w
}

// moduleOf is the module a package name (as workspace names it) belongs to.
func moduleOf(pkg string) string {
	m, _, _ := strings.Cut(pkg, "/")
	return m
}

// TestImportRules checks the import rules docs/architecture.md states under "The
// layers" against what go list reports. Each failure names the rule and the import
// that breaks it: either the code broke a rule, or the rule changed and the map must
// say so.
func TestImportRules(t *testing.T) {
	root := repoRoot(t)
	w := loadWorkspace(t, root)
	const where = archDoc + ", The layers, import rules"

	for _, p := range w.names {
		mod := moduleOf(p)

		// hipsys and memory import no module of ours, their tests included; stream
		// imports hipsys and memory and no other module of ours.
		allowed := map[string][]string{"hipsys": {"hipsys"}, "memory": {"memory"}, "stream": {"stream", "hipsys", "memory"}}
		if mods, ok := allowed[mod]; ok {
			for _, o := range w.all[p] {
				if !slices.Contains(mods, moduleOf(o)) {
					t.Errorf("%s: %s imports %s, but %s may import no module of ours but %s (its tests included)", where, p, o, mod, strings.Join(mods, ", "))
				}
			}
		}

		// server/compute imports stream, memory and hipsys, and no other package of the
		// server module but its own internal ones (server/compute/internal/...), which
		// are parts of compute behind a package boundary, importable by compute alone.
		if p == "server/compute" {
			for _, o := range w.all[p] {
				if strings.HasPrefix(o, "server/compute/internal/") {
					continue
				}
				if m := moduleOf(o); m != "stream" && m != "memory" && m != "hipsys" {
					t.Errorf("%s: server/compute imports %s; the map says it imports stream, memory and hipsys only", where, o)
				}
			}
			for _, want := range []string{"stream", "memory", "hipsys"} {
				if !slices.Contains(w.prod[p], want) {
					t.Errorf("%s: server/compute no longer imports %s; the map says it does", where, want)
				}
			}
		}

		// server imports compute, stream, memory, hipsys and hipsys/platforms.
		if p == "server" {
			want := []string{"server/compute", "stream", "memory", "hipsys", "hipsys/platforms"}
			for _, o := range w.prod[p] {
				if !slices.Contains(want, o) {
					t.Errorf("%s: server imports %s; the map says it imports %v only", where, o, want)
				}
			}
			if !slices.Contains(w.prod[p], "server/compute") {
				t.Errorf("%s: server no longer imports server/compute; the map says it stands on it", where)
			}
		}

		for _, o := range w.all[p] {
			// Nothing else in the repository imports compute.
			if o == "server/compute" && p != "server" {
				t.Errorf("%s: %s imports server/compute; the map says only server does (capi goes through server)", where, p)
			}
			// Nothing imports server but cmd/cubehip and capi (and server's own tests,
			// which the listing leaves out).
			if o == "server" && p != "server/cmd/cubehip" && p != "capi" {
				t.Errorf("%s: %s imports server; the map says only cmd/cubehip and capi do", where, p)
			}
		}

		// cgo sits at the two ends only: hipsys's platforms and their helpers (not the
		// hipsys package itself), and the C ABI.
		if len(w.cgo[p]) > 0 && (p == "hipsys" || (mod != "hipsys" && mod != "capi")) {
			t.Errorf("%s: %s uses cgo (%s); the map says nothing between hipsys's platforms and capi does", where, p, strings.Join(w.cgo[p], ", "))
		}
	}

	// capi imports server, memory, hipsys and hipsys/platforms: the C ABI is a face of
	// the Device.
	capi := []string{"server", "memory", "hipsys", "hipsys/platforms"}
	for _, o := range w.prod["capi"] {
		if !slices.Contains(capi, o) {
			t.Errorf("%s: capi imports %s; the map says it imports %v only", where, o, capi)
		}
	}
	if !slices.Contains(w.prod["capi"], "server") {
		t.Errorf("%s: capi does not import server; the map says the C ABI is built over the Device", where)
	}
	// The rules name every module; a new one needs its rule in the map.
	for m := range w.modules {
		if !slices.Contains([]string{"hipsys", "memory", "stream", "server", "capi"}, m) {
			t.Errorf("%s: module %s has no import rule in the map", where, m)
		}
	}
}

// TestSection checks the section reader on a small document, since a heading the
// reader misses would make the path check skip the README.
func TestSection(t *testing.T) {
	doc := "# T\n\n## Layout\n\n`a/b.go`\n### sub\n`c.go`\n## Next\n`d.go`\n"
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	got, first, ok := section(lines, "## Layout")
	if !ok || first != 4 {
		t.Fatalf("section: ok %v, first line %d; want true, 4", ok, first)
	}
	var toks []string
	for _, r := range refs("x", first, got, nil) {
		toks = append(toks, r.token)
	}
	if want := []string{"a/b.go", "c.go"}; !slices.Equal(toks, want) {
		t.Errorf("section's names: %v, want %v", toks, want)
	}
}

// benchDoc is where the figures behind the code's choices live: a comment names one of
// its sections instead of carrying a measured figure that goes stale unseen.
const benchDoc = "docs/benchmarks.md"

// benchCite is a comment's citation of a section of benchDoc, its heading quoted.
var benchCite = regexp.MustCompile(regexp.QuoteMeta(benchDoc) + `, "([^"]+)"`)

// commentText is the text of a source file's comment lines, markers stripped and joined
// by spaces, so that a citation wrapped over two lines reads as one.
func commentText(src string) string {
	var b strings.Builder
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[i+2:]
		} else {
			for _, m := range []string{"/*", "*/", "*", "#"} {
				l = strings.TrimPrefix(strings.TrimSuffix(l, "*/"), m)
			}
		}
		b.WriteString(strings.TrimSpace(l))
		b.WriteByte(' ')
	}
	return b.String()
}

// TestBenchmarkCitationsExist checks that every section of docs/benchmarks.md that the
// source cites by its heading exists, so that a renamed section cannot strand the
// reasons the code gives.
func TestBenchmarkCitationsExist(t *testing.T) {
	root := repoRoot(t)
	headings := map[string]bool{}
	for _, l := range readLines(t, filepath.Join(root, filepath.FromSlash(benchDoc))) {
		if h, ok := strings.CutPrefix(l, "#"); ok {
			headings[strings.TrimSpace(strings.TrimLeft(h, "#"))] = true
		}
	}
	srcExts := map[string]bool{".go": true, ".c": true, ".h": true, ".py": true, ".sh": true, ".hpp": true}
	cited := 0
	for _, top := range []string{"modules", "bindings", "include", "scripts"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if strings.HasPrefix(d.Name(), ".") || d.Name() == "build" {
					return filepath.SkipDir
				}
				return nil
			}
			if !srcExts[filepath.Ext(p)] || !d.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			for _, m := range benchCite.FindAllStringSubmatch(commentText(string(b)), -1) {
				cited++
				if !headings[m[1]] {
					t.Errorf("%s cites %s, %q: no section of that heading (a renamed section? fix the citation)", filepath.ToSlash(rel), benchDoc, m[1])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if cited < 20 {
		t.Errorf("found only %d citations of %s sections: the scan no longer reads them", cited, benchDoc)
	}
}

// maxPackageDoc is the most lines a package comment may take: a screen, so that go doc
// of a package shows what it is and where its detail lives (the doc comments of its
// types, docs/architecture.md), not the detail itself.
const maxPackageDoc = 48

// docFileName is a word of a package comment that names a source file of the
// repository: a .go or .c file, with or without a directory.
var docFileName = regexp.MustCompile(`(?:^|[\s(\[,;])((?:[\w.-]+/)*[\w-]+\.(?:go|c))\b`)

// TestPackageDocs checks each package's doc.go, and every other file that holds a
// package comment, in the workspace's modules: the comment fits a screen, and each
// source file it names (a .go or .c file, resolved beside the package, under its
// module, or from the repository's top) exists, so that a comment that sends the reader
// to a file for the detail does not send them nowhere.
func TestPackageDocs(t *testing.T) {
	root := repoRoot(t)
	byName := filesByName(t, root)
	seen := 0
	err := filepath.WalkDir(filepath.Join(root, "modules"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		lines := readLines(t, p)
		var doc []string
		for _, l := range lines {
			if strings.HasPrefix(l, "package ") {
				break
			}
			if strings.HasPrefix(l, "//") {
				doc = append(doc, l)
			} else {
				doc = nil // a comment not attached to the package clause
			}
		}
		if len(doc) == 0 || (!strings.HasPrefix(doc[0], "// Package ") && filepath.Base(p) != "doc.go") {
			return nil
		}
		seen++
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if len(doc) > maxPackageDoc {
			t.Errorf("%s: the package comment takes %d lines, more than a screen (%d): keep what the package is and where its detail lives, and move the detail to the doc comments of its types or to %s", rel, len(doc), maxPackageDoc, archDoc)
		}
		dir := path.Dir(rel)
		mod := strings.Join(strings.SplitN(dir, "/", 3)[:2], "/")
		for _, m := range docFileName.FindAllStringSubmatch(strings.Join(doc, "\n"), -1) {
			tok := m[1]
			if strings.HasPrefix(path.Base(tok), "_") {
				continue // a pattern's tail: *_test.go
			}
			found := false
			for _, base := range []string{dir, mod, ""} {
				if exists(filepath.Join(root, filepath.FromSlash(path.Join(base, tok)))) {
					found = true
					break
				}
			}
			if !found && !strings.Contains(tok, "/") && byName[tok] != "" {
				found = true
			}
			if !found && resolve(root, tok, byName) == "" {
				t.Errorf("%s: the package comment names %s, which is no file beside the package, in its module or in the repository: a stale name, fix the comment", rel, tok)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 15 {
		t.Errorf("found only %d package comments under modules/: the scan no longer reads them", seen)
	}
}
