package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		version  string
		released []string
		wantErr  string
	}{
		{"v0.1.0", nil, ""},
		{"v1.2.3-rc.1", []string{"v1.2.2"}, ""},
		{"v0.2.0", []string{"v0.1.0", "v0.1.5"}, ""},
		{"0.1.0", nil, "is not of the form"},
		{"v0.1", nil, "is not of the form"},
		{"v0.1.0+build", nil, "is not of the form"},
		{"v2.0.0", nil, "needs its path to end in /v2"},
		{"v0.1.0", []string{"v0.1.0"}, "not newer than the released v0.1.0"},
		{"v0.1.0", []string{"v0.2.0"}, "not newer than the released v0.2.0"},
		{"v0.1.0-rc.1", []string{"v0.1.0"}, "not newer"},
		{"v0.1.0", []string{"junk"}, "not semantic versioning"},
	} {
		err := checkVersion(tc.version, tc.released)
		if tc.wantErr == "" && err != nil {
			t.Errorf("checkVersion(%s, %v) = %v, want nil", tc.version, tc.released, err)
		}
		if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("checkVersion(%s, %v) = %v, want an error saying %q", tc.version, tc.released, err, tc.wantErr)
		}
	}
}

// writeFiles writes name → content under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		full := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReleaseOrder(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"go.work":        "go 1.26\nuse (\n\t./m/top\n\t./m/mid\n\t./m/base\n\t./m/other\n)\n",
		"m/top/go.mod":   "module ex.com/top\ngo 1.26\nrequire (\n\tex.com/mid v0.3.0\n\tex.com/base v0.2.0\n\tthird.party/x v1.0.0\n)\n",
		"m/mid/go.mod":   "module ex.com/mid\ngo 1.26\nrequire ex.com/base v0.2.0\n",
		"m/base/go.mod":  "module ex.com/base\ngo 1.26\n",
		"m/other/go.mod": "module ex.com/other\ngo 1.26\n",
	})
	ws, err := loadWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	order, err := ws.releaseOrder()
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, m := range order {
		dirs = append(dirs, m.Dir)
	}
	if got, want := strings.Join(dirs, " "), "m/base m/other m/mid m/top"; got != want {
		t.Errorf("release order %q, want %q", got, want)
	}
	reqs, err := ws.siblingRequirements("m/top")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0] != (requirement{"m/base", "v0.2.0"}) || reqs[1] != (requirement{"m/mid", "v0.3.0"}) {
		t.Errorf("m/top's sibling requirements %v, want m/base v0.2.0 and m/mid v0.3.0 (not the third party)", reqs)
	}
	if _, err := ws.siblingRequirements("m/nope"); err == nil || !strings.Contains(err.Error(), "not a module of go.work") {
		t.Errorf("an unknown module: %v", err)
	}

	writeFiles(t, root, map[string]string{"m/base/go.mod": "module ex.com/base\ngo 1.26\nrequire ex.com/top v0.1.0\n"})
	ws, err = loadWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.releaseOrder(); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("a requirement cycle gave %v, want an error naming the cycle", err)
	}
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func zipNames(t *testing.T, name string) []string {
	t.Helper()
	r, err := zip.OpenReader(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var names []string
	for _, f := range r.File {
		names = append(names, f.Name)
	}
	return names
}

// TestPublish publishes a module from the tree and from a tag, then has the go command
// download both through GOPROXY=file://, as an outsider's build would.
func TestPublish(t *testing.T) {
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{
		".gitignore":          "/mods/lib/built.bin\n",
		"mods/lib/go.mod":     "module ex.com/Lib\n\ngo 1.26\n",
		"mods/lib/lib.go":     "package lib\n\nconst V = 1\n",
		"mods/lib/sub/go.mod": "module ex.com/Lib/sub\n\ngo 1.26\n",
		"mods/lib/sub/sub.go": "package sub\n",
		"mods/lib/built.bin":  "a build output",
	})
	gitRun(t, repo, "init", "-q")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "one")
	gitRun(t, repo, "tag", "mods/lib/v0.1.0")
	// The tree moves on, with a file git would track but does not yet.
	writeFiles(t, repo, map[string]string{"mods/lib/new.go": "package lib\n\nconst W = 2\n"})

	out := t.TempDir()
	if err := run([]string{"publish", "-repo", repo, "-out", out, "mods/lib@v0.2.0", "mods/lib@v0.1.0=mods/lib/v0.1.0"}, os.Stdout); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, "ex.com", "!lib", "@v") // upper case is escaped as !lower
	list, err := os.ReadFile(filepath.Join(dir, "list"))
	if err != nil {
		t.Fatal(err)
	}
	if string(list) != "v0.1.0\nv0.2.0\n" {
		t.Errorf("list %q, want both versions in order", list)
	}
	var info struct{ Version string }
	data, err := os.ReadFile(filepath.Join(dir, "v0.2.0.info"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &info); err != nil || info.Version != "v0.2.0" {
		t.Errorf("v0.2.0.info %s: %v", data, err)
	}
	tree := strings.Join(zipNames(t, filepath.Join(dir, "v0.2.0.zip")), " ")
	if want := "ex.com/Lib@v0.2.0/go.mod ex.com/Lib@v0.2.0/lib.go ex.com/Lib@v0.2.0/new.go"; !sameWords(tree, want) {
		t.Errorf("the tree's zip holds %q, want %q (no ignored file, no nested module)", tree, want)
	}
	tagged := strings.Join(zipNames(t, filepath.Join(dir, "v0.1.0.zip")), " ")
	if want := "ex.com/Lib@v0.1.0/go.mod ex.com/Lib@v0.1.0/lib.go"; !sameWords(tagged, want) {
		t.Errorf("the tag's zip holds %q, want %q (the tagged files only)", tagged, want)
	}

	for _, bad := range []string{"mods/lib", "mods/lib@0.1", "@v0.1.0"} {
		if err := run([]string{"publish", "-repo", repo, "-out", out, bad}, os.Stdout); err == nil {
			t.Errorf("publish %q: no error", bad)
		}
	}

	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to download through the proxy:", err)
	}
	for _, v := range []string{"v0.1.0", "v0.2.0"} {
		cmd := exec.Command(gobin, "mod", "download", "-json", "ex.com/Lib@"+v)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=file://"+filepath.ToSlash(out), "GONOSUMDB=ex.com",
			"GOMODCACHE="+t.TempDir(), "GOFLAGS=-modcacherw")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if outJSON, err := cmd.Output(); err != nil {
			t.Errorf("go mod download ex.com/Lib@%s: %v\n%s%s", v, err, outJSON, stderr.String())
		}
	}
}

func sameWords(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	if len(x) != len(y) {
		return false
	}
	seen := map[string]int{}
	for _, w := range x {
		seen[w]++
	}
	for _, w := range y {
		seen[w]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
