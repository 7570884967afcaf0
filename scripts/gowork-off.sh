#!/usr/bin/env bash
# Builds, vets and tests modules with GOWORK=off, each against exactly the sibling
# versions its go.mod requires, as a project that depends on it would build it: a
# released version is served from its tag (modules/<name>/<version>), one not yet
# released from the working tree, through a file-based GOPROXY (scripts/modproxy). A
# module using a sibling's API that its required version lacks fails here, not in a
# user's build.
#
#   scripts/gowork-off.sh [MODULE...]      default: every module of go.work
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
# shellcheck source=scripts/lib/modproxy.sh
. "$top/scripts/lib/modproxy.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/cubehip-gowork-off.XXXXXX")
trap 'rm -rf "$work"' EXIT
build_modproxy "$work"
mp="$work/modproxy"
mapfile -t all < <("$mp" modules -repo "$top" | cut -d' ' -f1)
modules=()
for name in "$@"; do modules+=("modules/${name#modules/}"); done
[ ${#modules[@]} -gt 0 ] || modules=("${all[@]}")

publish_required "$mp" "$work/proxy"
use_file_proxy "$work/proxy" "$work/modcache"

status=0
for dir in "${modules[@]}"; do
  echo "== $dir (GOWORK=off)"
  # Each module is copied out of the tree, so the go.sum lines an unreleased sibling
  # needs (-mod=mod writes them) never touch the checkout.
  rm -rf "$work/mod"
  cp -r "$top/$dir" "$work/mod"
  (cd "$work/mod" && go build -mod=mod ./... && go vet ./... && go test -count=1 ./...) || status=1
done
exit $status
