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
# --- allocation budgets, without the race detector ---------------------------------------
# The race detector's runtime allocates where a normal build does not, so the tests that
# count allocations (testing.AllocsPerRun) skip or loosen their assertion under -race, which
# every run above uses. Run them once more in a normal build, so their budgets hold in CI.
echo "== allocation tests without -race"
(cd modules/capi && go test -count=1 -run 'AllocatesNothing|Allocs' ./...) || status=1
(cd modules/hipsys && go test -count=1 -run 'AllocatesNothing|Allocs' ./...) || status=1
(cd modules/memory && go test -count=1 -run 'AllocatesNothing|Allocs' ./...) || status=1
(cd modules/server && go test -count=1 -run 'AllocatesNothing|Allocs' ./...) || status=1

if command -v staticcheck >/dev/null; then
  echo "== lint"
  "$top/scripts/lint.sh" || status=1
fi

# --- releases: the modules as outsiders take them, the release script, the workflows ------
echo "== scripts/modproxy"
(cd scripts/modproxy && GOWORK=off go vet ./... && GOWORK=off go test -count=1 ./...) || status=1
actionlint=$(go env GOPATH)/bin/actionlint
if [ -x "$actionlint" ]; then
  echo "== actionlint"
  "$actionlint" || status=1
else
  echo "== actionlint: not installed (scripts/deps.sh installs it), workflows not linted"
fi
echo "== scripts/outsider-test.sh"
./scripts/outsider-test.sh || status=1
echo "== scripts/release-test.sh"
./scripts/release-test.sh || status=1

# --- the Python package (bindings/python) on the cpu platform -------------------------------
# The suite runs against a freshly built libcubehip.so ($CUBEHIP_LIBRARY), with Debian's
# python3 (deps.sh installs numpy, pytest, hypothesis and the wheel tools there); its wheel
# test builds the wheel from that library and installs it into a fresh venv, offline. The
# package's extension (cubehip._native) is built in place first, beside the sources
# (src/cubehip/_native.abi3.so, ignored by git), so the in-tree package uses it.
echo "== bindings/python"
./scripts/build-capi.sh >/dev/null || status=1
(cd bindings/python && /usr/bin/python3 setup.py -q build_ext --inplace >/dev/null &&
  CUBEHIP_LIBRARY="$top/build/lib/libcubehip.so" PYTHONPATH=src CUBEHIP_PLATFORM=cpu \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider tests) || status=1

exit $status
