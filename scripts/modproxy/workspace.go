package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/mod/modfile"
)

// workModule is one module of the workspace: its directory relative to the repository's
// root, its path, and what its go.mod requires.
type workModule struct {
	Dir     string
	Path    string
	Require []*modfile.Require
}

// requirement is a sibling a module requires, by its directory.
type requirement struct {
	Dir     string
	Version string
}

// workspace is the modules go.work uses, keyed by module path.
type workspace map[string]*workModule

func loadWorkspace(repo string) (workspace, error) {
	name := filepath.Join(repo, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, err
	}
	ws := workspace{}
	for _, u := range wf.Use {
		dir := filepath.ToSlash(filepath.Clean(u.Path))
		gomod := filepath.Join(repo, dir, "go.mod")
		data, err := os.ReadFile(gomod)
		if err != nil {
			return nil, err
		}
		mf, err := modfile.ParseLax(gomod, data, nil)
		if err != nil {
			return nil, err
		}
		if mf.Module == nil {
			return nil, fmt.Errorf("%s has no module line", gomod)
		}
		ws[mf.Module.Mod.Path] = &workModule{Dir: dir, Path: mf.Module.Mod.Path, Require: mf.Require}
	}
	return ws, nil
}

func (ws workspace) byDir(dir string) (*workModule, error) {
	dir = filepath.ToSlash(filepath.Clean(dir))
	for _, m := range ws {
		if m.Dir == dir {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%s is not a module of go.work", dir)
}

// siblingRequirements lists the workspace modules dir's go.mod requires, by directory.
func (ws workspace) siblingRequirements(dir string) ([]requirement, error) {
	m, err := ws.byDir(dir)
	if err != nil {
		return nil, err
	}
	var reqs []requirement
	for _, r := range m.Require {
		if sib, ok := ws[r.Mod.Path]; ok {
			reqs = append(reqs, requirement{Dir: sib.Dir, Version: r.Mod.Version})
		}
	}
	slices.SortFunc(reqs, func(a, b requirement) int { return cmp.Compare(a.Dir, b.Dir) })
	return reqs, nil
}

// releaseOrder lists the modules so that each comes after every sibling it requires:
// the order their tags must be created in, since a module's release names its siblings'
// released versions. Among modules free to go next the order is by directory, so it
// never changes from run to run.
func (ws workspace) releaseOrder() ([]*workModule, error) {
	done := map[string]bool{}
	var order []*workModule
	for len(order) < len(ws) {
		var ready []*workModule
		for _, m := range ws {
			if done[m.Path] {
				continue
			}
			if !slices.ContainsFunc(m.Require, func(r *modfile.Require) bool {
				_, sibling := ws[r.Mod.Path]
				return sibling && !done[r.Mod.Path]
			}) {
				ready = append(ready, m)
			}
		}
		if len(ready) == 0 {
			var stuck []string
			for _, m := range ws {
				if !done[m.Path] {
					stuck = append(stuck, m.Dir)
				}
			}
			slices.Sort(stuck)
			return nil, fmt.Errorf("the modules %v require each other in a cycle: none can be released first", stuck)
		}
		slices.SortFunc(ready, func(a, b *workModule) int { return cmp.Compare(a.Dir, b.Dir) })
		for _, m := range ready {
			done[m.Path] = true
		}
		order = append(order, ready...)
	}
	return order, nil
}
