package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// spec is one module version to publish: the module in Dir, as the working tree has it
// (Rev empty) or as git revision Rev has it.
type spec struct {
	Dir, Version, Rev string
}

func parseSpec(arg string) (spec, error) {
	dir, rest, ok := strings.Cut(arg, "@")
	if !ok || dir == "" {
		return spec{}, fmt.Errorf("%q is not MODDIR@VERSION[=REV]", arg)
	}
	version, rev, _ := strings.Cut(rest, "=")
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return spec{}, fmt.Errorf("%q: version %q is not canonical semantic versioning (vX.Y.Z)", arg, version)
	}
	return spec{Dir: filepath.ToSlash(filepath.Clean(dir)), Version: version, Rev: rev}, nil
}

// publish writes the module version into the proxy at out in the layout of the Go module
// proxy protocol (go help goproxy): <path>/@v/list, and <version>.info, .mod and .zip
// beside it. The zip is built by golang.org/x/mod/zip, the code the go command checks
// zips with, so a file the go command would refuse (a nested module's, a vendor
// directory's, names differing only in case) is refused here, not by the user's go get.
func publish(out, repo string, s spec) error {
	gomod, when, err := moduleSource(repo, s)
	if err != nil {
		return err
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return fmt.Errorf("%s/go.mod has no module line", s.Dir)
	}
	m := module.Version{Path: path, Version: s.Version}
	if err := module.Check(m.Path, m.Version); err != nil {
		return err
	}
	escPath, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	escVersion, err := module.EscapeVersion(m.Version)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var zip bytes.Buffer
	if s.Rev != "" {
		err = createFromRev(&zip, m, repo, s.Rev, s.Dir)
	} else {
		err = createFromTree(&zip, m, repo, s.Dir)
	}
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, when.UTC()})
	if err != nil {
		return err
	}
	base := filepath.Join(dir, escVersion)
	for name, data := range map[string][]byte{".info": info, ".mod": gomod, ".zip": zip.Bytes()} {
		if err := os.WriteFile(base+name, data, 0o644); err != nil {
			return err
		}
	}
	return addToList(filepath.Join(dir, "list"), m.Version)
}

// moduleSource returns the module's go.mod and the time its version is dated.
func moduleSource(repo string, s spec) (gomod []byte, when time.Time, err error) {
	if s.Rev == "" {
		gomod, err = os.ReadFile(filepath.Join(repo, s.Dir, "go.mod"))
		return gomod, time.Now(), err
	}
	gomod, err = git(repo, "show", s.Rev+":"+s.Dir+"/go.mod")
	if err != nil {
		return nil, time.Time{}, err
	}
	date, err := git(repo, "log", "-1", "--format=%cI", s.Rev)
	if err != nil {
		return nil, time.Time{}, err
	}
	when, err = time.Parse(time.RFC3339, strings.TrimSpace(string(date)))
	return gomod, when, err
}

// createFromTree zips the files of the module in dir that git tracks or would track
// (untracked files .gitignore does not exclude), as they are in the working tree: the
// content a commit of the tree would release, never a build output lying beside it.
func createFromTree(w io.Writer, m module.Version, repo, dir string) error {
	listing, err := git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", dir)
	if err != nil {
		return err
	}
	var files []modzip.File
	for name := range strings.SplitSeq(strings.TrimRight(string(listing), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		full := filepath.Join(repo, filepath.FromSlash(name))
		if _, err := os.Lstat(full); os.IsNotExist(err) {
			continue // deleted in the tree, not yet in the index
		}
		rel := strings.TrimPrefix(name, dir+"/")
		files = append(files, treeFile{rel: rel, full: full})
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no files (is it in this git repository?)", dir)
	}
	return modzip.Create(w, m, files)
}

// createFromRev zips the module in dir as git revision rev has it. It unpacks git
// archive's output rather than calling modzip.CreateFromVCS, which wants the directory
// holding .git and so fails in a linked worktree (git worktree add), where release.sh
// runs its dry runs.
func createFromRev(w io.Writer, m module.Version, repo, rev, dir string) error {
	archive, err := git(repo, "archive", "--format=tar", rev, "--", dir)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "modproxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := untar(bytes.NewReader(archive), tmp); err != nil {
		return fmt.Errorf("unpacking %s:%s: %w", rev, dir, err)
	}
	return modzip.CreateFromDir(w, m, filepath.Join(tmp, filepath.FromSlash(dir)))
}

// untar writes the regular files and directories of a tar stream under root. Links and
// other entries are skipped: a module zip holds regular files only.
func untar(r io.Reader, root string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, filepath.Clean(root)+string(filepath.Separator)) {
			return fmt.Errorf("entry %q leaves the archive's directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			err = writeFile(name, tr)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(name string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// treeFile is a file of the working tree as golang.org/x/mod/zip reads one.
type treeFile struct{ rel, full string }

func (f treeFile) Path() string                 { return f.rel }
func (f treeFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.full) }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(f.full) }

// addToList adds version to the proxy's list of the module's versions, kept sorted.
func addToList(name, version string) error {
	data, err := os.ReadFile(name)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	versions := strings.Fields(string(data))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	return os.WriteFile(name, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}

func git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
