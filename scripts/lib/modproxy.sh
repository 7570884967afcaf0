# shellcheck shell=bash
# Sourced by release.sh and outsider-test.sh: builds the modproxy tool (scripts/modproxy)
# and sets up go commands that resolve our module path from a file-based proxy.
#
# Our modules' path, github.com/cubehip/cubehip/modules/..., is published nowhere a go
# command can reach until it is tagged and public, so anything that builds them without
# the workspace (GOWORK=off) must be handed them through a proxy made from the tree.

# The sourcing script sets top, the repository's root.

readonly CUBEHIP_MODULE_PREFIX=github.com/cubehip/cubehip

# build_modproxy DIR: builds the tool into DIR/modproxy. It is its own module, outside
# go.work, so it builds with GOWORK=off from its own directory.
build_modproxy() {
  # shellcheck disable=SC2154 # top is the sourcing script's
  (cd "$top/scripts/modproxy" && GOWORK=off go build -o "$1/modproxy" .)
}

# use_file_proxy PROXYDIR MODCACHE: go commands of this shell from now on resolve our
# modules from PROXYDIR and nothing else from the workspace:
#   - GOPROXY asks PROXYDIR first, then the local module cache's download directory (the
#     same layout, so third-party modules deps.sh already fetched need no network), then
#     the user's own proxy, for third-party modules the cache lacks. A "not found" from a
#     file proxy falls through to the next one (the comma).
#   - GONOSUMDB: the public checksum database has never seen our modules and would
#     refuse them; third-party modules are still checked against it.
#   - GOMODCACHE is a fresh one: the user's cache may hold an earlier build of the same
#     version, which the go command would take without reading the proxy again.
#   - -modcacherw, so the fresh cache can be deleted without chmod.
use_file_proxy() {
  local cache upstream flags
  cache=$(go env GOMODCACHE)
  upstream=$(go env GOPROXY)
  flags=$(go env GOFLAGS)
  export GOWORK=off
  export GOPROXY="file://$1,file://$cache/cache/download${upstream:+,$upstream}"
  export GONOSUMDB="$CUBEHIP_MODULE_PREFIX${GONOSUMDB:+,$GONOSUMDB}"
  export GOMODCACHE="$2"
  export GOFLAGS="$flags -modcacherw"
}

# publish_required MODPROXY PROXYDIR: publishes every sibling version a module of go.work
# requires: a released one (its tag modules/<name>/<version> exists) as tagged, one not
# yet released as the working tree has it.
publish_required() {
  local mp=$1 dir sib v specs=()
  mkdir -p "$2"
  while read -r dir _; do
    while read -r sib v; do
      [ -n "$sib" ] || continue
      if is_released "$sib" "$v"; then specs+=("$sib@$v=$sib/$v"); else specs+=("$sib@$v"); fi
    done < <("$mp" requires -repo "$top" "$dir")
  done < <("$mp" modules -repo "$top")
  [ ${#specs[@]} -gt 0 ] || return 0
  mapfile -t specs < <(printf '%s\n' "${specs[@]}" | sort -u)
  "$mp" publish -repo "$top" -out "$2" "${specs[@]}"
}

# is_released DIR VERSION: whether the module in DIR has the tag DIR/VERSION.
is_released() { git -C "$top" rev-parse -q --verify "refs/tags/$1/$2" >/dev/null; }
