#!/usr/bin/env bash
# Runs one command in every module of the workspace, from the module's directory:
#
#   scripts/each-module.sh go vet ./...
#   scripts/each-module.sh go test -count=1 ./...
#   scripts/each-module.sh go build ./...
#
# The repository's root is not a module (go.work ties the modules together), so `go vet
# ./...` there fails with "directory prefix . does not contain modules listed in
# go.work": a package pattern is resolved inside one module. This runs the command in
# each of them and exits non-zero if any run failed, after running them all.
set -uo pipefail
if [ $# -eq 0 ]; then
  echo "usage: scripts/each-module.sh COMMAND [ARGS...]   (e.g. go vet ./...)" >&2
  exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
status=0
for dir in $(go list -f '{{.Dir}}' -m); do
  echo "== ${dir#"$top"/}"
  (cd "$dir" && "$@") || status=1
done
exit $status
