#!/usr/bin/env bash
# lint.sh holds every module of the workspace (go.work) to gofmt and staticcheck: the
# goal is no finding anywhere. scripts/deps.sh installs the pinned staticcheck, and
# scripts/test.sh runs this script when staticcheck is installed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH)/bin"
command -v staticcheck >/dev/null || { echo "lint: staticcheck not found (scripts/deps.sh installs it)" >&2; exit 1; }

status=0
for m in $(sed -n 's#^[[:space:]]*\./\(modules/[^[:space:])]*\).*#\1#p' go.work); do
  unformatted=$(gofmt -l "$m")
  if [ -n "$unformatted" ]; then
    echo "lint: not gofmt'ed: $unformatted" >&2
    status=1
  fi
  (cd "$m" && staticcheck ./...) || { echo "lint: staticcheck findings in $m" >&2; status=1; }
done
exit $status
