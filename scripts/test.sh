#!/usr/bin/env bash
# The whole test suite: installs what it needs (scripts/deps.sh), then vets and tests every
# module of the workspace with the race detector. On a machine without a GPU the platform
# tests run on the embedded cpu device; the amd platform is tested against the real ROCm
# library and compiler, and the GPU-only tests say why they skip.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export PATH="$PATH:/usr/local/go/bin"
"$top/scripts/deps.sh"
export PATH="$PATH:$(go env GOPATH)/bin"
# deps.sh installed ROCm's library and hiprtc, so the amd platform's library tests must
# run, not skip: a broken install is a failure here, not a quiet pass.
export CUBEHIP_REQUIRE_AMD=1

modules=$(sed -n 's#^[[:space:]]*\./\(modules/[^[:space:])]*\).*#\1#p' go.work)
status=0
for m in $modules; do
  echo "== $m"
  (cd "$m" && go vet ./... && go test -race -count=1 -timeout 20m ./...) || status=1
done
if command -v staticcheck >/dev/null; then
  echo "== lint"
  "$top/scripts/lint.sh" || status=1
fi
exit $status
