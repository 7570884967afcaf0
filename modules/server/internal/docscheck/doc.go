// Package docscheck holds a test, and nothing else, that keeps the repository's map
// honest: every file and directory that docs/architecture.md and the Layout section of
// README.md name in backquotes exists, and the import rules docs/architecture.md states
// hold for the packages of the workspace, as the go command lists them; every section of
// docs/benchmarks.md that a source comment cites by its heading exists; and every
// package's doc.go keeps its package comment to a screen and names only files that exist.
//
// It lives in the server module so that `go test ./...` there runs it. Outside the
// repository (a module copy from a proxy, which carries neither go.work nor docs/) the
// test skips.
package docscheck
