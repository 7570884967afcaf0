#!/usr/bin/env bash
# Cuts a release of cubehip's Go modules: every module (or the ones named) at VERSION,
# tagged modules/<name>/VERSION, bottom-up (hipsys and memory, then stream, then server),
# because each release names its siblings' released versions and a Go module tag cannot
# be taken back once pushed.
#
#   scripts/release.sh [--dry-run] VERSION [MODULE...]     e.g. scripts/release.sh v0.1.0
#
# It refuses, before changing anything, unless:
#   - VERSION is vMAJOR.MINOR.PATCH[-PRERELEASE], v0 or v1, newer than each module's
#     released versions;
#   - the working tree is clean (the release is the commit, nothing beside it);
#   - each module's CHANGELOG.md has a "## [X.Y.Z] - YYYY-MM-DD" entry for it, and its
#     LICENSE and NOTICE are copies of the repository's;
#   - each sibling a module requires is released in this run or at an existing tag.
# Then, module by module in release order, it sets the requirements on the siblings
# released in this run to VERSION (and go.work's matching replace lines), refreshes
# go.sum, and builds, vets and tests the module with GOWORK=off against exactly the
# versions it names, served by a file-based GOPROXY (scripts/modproxy): released
# siblings from their tags, this run's from the tree. Last it commits those go.mod, go.sum
# and go.work changes and creates the tags; pushing them is left to you (it says how).
#
# --dry-run does all of it in a scratch worktree of HEAD and creates neither the commit
# nor the tags. --no-test (with --dry-run only) builds and vets each module alone but
# leaves its tests out: how scripts/test.sh exercises the release after running every
# module's tests itself, so the suite does not run them twice.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
# shellcheck source=scripts/lib/modproxy.sh
. "$top/scripts/lib/modproxy.sh"

die() { echo "release: $*" >&2; exit 1; }

dry_run=false
run_tests=true
args=()
for a in "$@"; do
  case "$a" in
    --dry-run) dry_run=true ;;
    --no-test) run_tests=false ;;
    -*) die "unknown flag $a (usage: scripts/release.sh [--dry-run [--no-test]] VERSION [MODULE...])" ;;
    *) args+=("$a") ;;
  esac
done
[ ${#args[@]} -ge 1 ] || die "usage: scripts/release.sh [--dry-run [--no-test]] VERSION [MODULE...]"
$dry_run || $run_tests || die "--no-test is for --dry-run only: a release is tested"
version=${args[0]}
cd "$top"

work=$(mktemp -d "${TMPDIR:-/tmp}/cubehip-release.XXXXXX")
cleanup() {
  if [ -d "$work/tree" ]; then git -C "$top" worktree remove --force "$work/tree" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
build_modproxy "$work"
mp="$work/modproxy"

# The modules in release order, and the ones this run releases.
mapfile -t order < <("$mp" modules -repo "$top" | cut -d' ' -f1)
declare -A releasing=()
if [ ${#args[@]} -gt 1 ]; then
  for name in "${args[@]:1}"; do
    dir=modules/${name#modules/}
    printf '%s\n' "${order[@]}" | grep -qx "$dir" || die "$name is not a module of go.work (${order[*]})"
    releasing[$dir]=1
  done
else
  for dir in "${order[@]}"; do releasing[$dir]=1; done
fi
set_ordered=()
for dir in "${order[@]}"; do [ -n "${releasing[$dir]:-}" ] && set_ordered+=("$dir"); done

# released DIR: the module's released versions, from its tags.
released() { git tag --list "$1/v*" | sed "s#^$1/##"; }
tagged() { git rev-parse -q --verify "refs/tags/$1/$2" >/dev/null; }

msg=$("$mp" version "$version" 2>&1) || die "${msg#modproxy: }"
problems=()
for dir in "${set_ordered[@]}"; do
  # shellcheck disable=SC2046 # one argument per released version
  msg=$("$mp" version "$version" $(released "$dir") 2>&1) || problems+=("$dir: ${msg#modproxy: }")
  entry="## [${version#v}] - "
  if ! grep -Eq "^## \[${version#v}\] - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" "$dir/CHANGELOG.md" 2>/dev/null; then
    problems+=("$dir/CHANGELOG.md has no \"$entry""YYYY-MM-DD\" entry")
  fi
  for f in LICENSE NOTICE; do
    cmp -s "$f" "$dir/$f" || problems+=("$dir/$f is missing or differs from $f: a module's zip holds only its own directory, so each carries a copy")
  done
  while read -r sib v; do
    [ -n "$sib" ] || continue
    if [ -z "${releasing[$sib]:-}" ] && ! tagged "$sib" "$v"; then
      problems+=("$dir requires $sib $v, which is neither released (no tag $sib/$v) nor in this release")
    fi
  done < <("$mp" requires -repo "$top" "$dir")
done
dirty=$(git status --porcelain --untracked-files=normal)
[ -z "$dirty" ] || problems+=("the working tree is not clean: commit or stash first:
$dirty")
if [ ${#problems[@]} -gt 0 ]; then
  printf 'release: %s\n' "${problems[@]}" >&2
  exit 1
fi

if $dry_run; then
  git worktree add --quiet --detach "$work/tree" HEAD
  root="$work/tree"
else
  root="$top"
fi
echo "release: ${set_ordered[*]} at $version, in this order$($dry_run && echo ' (dry run)')"

# Every released sibling version the modules name is served from its tag; this run's
# modules join the proxy one by one, as each is checked.
use_file_proxy "$work/proxy" "$work/modcache"
mkdir -p "$work/proxy"
specs=()
for dir in "${order[@]}"; do
  while read -r sib v; do
    [ -n "$sib" ] && [ -z "${releasing[$sib]:-}" ] && specs+=("$sib@$v=$sib/$v")
  done < <("$mp" requires -repo "$root" "$dir")
done
if [ ${#specs[@]} -gt 0 ]; then
  mapfile -t specs < <(printf '%s\n' "${specs[@]}" | sort -u)
  "$mp" publish -repo "$root" -out "$work/proxy" "${specs[@]}"
fi

for dir in "${set_ordered[@]}"; do
  echo "== $dir $version"
  while read -r sib v; do
    [ -n "$sib" ] && [ -n "${releasing[$sib]:-}" ] || continue
    path="$CUBEHIP_MODULE_PREFIX/$sib"
    [ "$v" != "$version" ] || continue
    (cd "$root/$dir" && go mod edit -require="$path@$version")
    # go.work's replace line for the old version now names the new one, in place.
    if grep -Eq "^[[:space:]]*(replace[[:space:]]+)?$path $version " "$root/go.work"; then
      : # another module moved it already
    elif grep -Eq "^[[:space:]]*(replace[[:space:]]+)?$path $v " "$root/go.work"; then
      sed -i -E "s#^([[:space:]]*(replace[[:space:]]+)?$path) $v #\1 $version #" "$root/go.work"
    else
      (cd "$root" && GOWORK='' go work edit -replace="$path@$version=./$sib")
    fi
  done < <("$mp" requires -repo "$root" "$dir")
  (
    cd "$root/$dir"
    # tidy writes go.sum's lines for the siblings' new versions, hashed from the proxy.
    go mod tidy
    go build ./...
    go vet ./...
    if $run_tests; then go test -count=1 ./...; fi
  )
  left=$(git -C "$root" status --porcelain --untracked-files=normal -- "$dir" | grep -Ev "^ M $dir/go\.(mod|sum)\$" || true)
  [ -z "$left" ] || die "checking $dir left files behind, which its release would carry:
$left"
  "$mp" publish -repo "$root" -out "$work/proxy" "$dir@$version"
done

if $dry_run; then
  echo "release: dry run passed; a release would commit:"
  git -C "$root" diff --stat
  for dir in "${set_ordered[@]}"; do echo "release: and tag $dir/$version"; done
  exit 0
fi

git add go.work "${set_ordered[@]/%//go.mod}" "${set_ordered[@]/%//go.sum}"
if ! git diff --cached --quiet; then
  git commit -q -m "release: ${set_ordered[*]} at $version" -m "Each module requires the siblings released with it at $version."
fi
tags=()
for dir in "${set_ordered[@]}"; do
  git tag -a "$dir/$version" -m "$dir $version"
  tags+=("$dir/$version")
done
echo "release: tagged $(git rev-parse --short HEAD) as ${tags[*]}"
echo "release: publish with: git push origin HEAD ${tags[*]}"
