#!/usr/bin/env bash
# go mod tidy for modules that require siblings, which the go command alone cannot do
# here: tidy ignores go.work, and a sibling's version is published nowhere public until
# it is released. This runs tidy with GOWORK=off against a file-based proxy holding each
# required sibling version (released ones from their tags, the others from the tree),
# then drops go.sum's lines for the versions not yet released: their content is the tree
# of today, and scripts/release.sh writes their real hashes when it releases them.
#
#   scripts/tidy.sh [MODULE...]      default: every module of go.work
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
# shellcheck source=scripts/lib/modproxy.sh
. "$top/scripts/lib/modproxy.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/cubehip-tidy.XXXXXX")
trap 'rm -rf "$work"' EXIT
build_modproxy "$work"
mp="$work/modproxy"
modules=()
for name in "$@"; do modules+=("modules/${name#modules/}"); done
[ ${#modules[@]} -gt 0 ] || mapfile -t modules < <("$mp" modules -repo "$top" | cut -d' ' -f1)
publish_required "$mp" "$work/proxy"
use_file_proxy "$work/proxy" "$work/modcache"

for dir in "${modules[@]}"; do
  echo "== go mod tidy in $dir"
  (cd "$top/$dir" && go mod tidy)
  while read -r sib v; do
    [ -n "$sib" ] && ! is_released "$sib" "$v" || continue
    sed -i "\#^$CUBEHIP_MODULE_PREFIX/$sib ${v}[ /]#d" "$top/$dir/go.sum"
  done < <("$mp" requires -repo "$top" "$dir")
done
