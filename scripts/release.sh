#!/usr/bin/env bash
# Cuts a release of cubehip's Go modules: every module (or the ones named) at VERSION,
# tagged modules/<name>/VERSION, bottom-up (hipsys and memory, then stream, then server),
# because each release names its siblings' released versions and a Go module tag cannot
# be taken back once pushed.
#
#   scripts/release.sh [--dry-run] [--remote NAME] [--no-push] VERSION [MODULE...]
#   scripts/release.sh --push-only [--dry-run] [--remote NAME] VERSION [MODULE...]
#
#   e.g. scripts/release.sh v0.1.0
#
# It refuses, before changing anything, unless:
#   - VERSION is vMAJOR.MINOR.PATCH[-PRERELEASE], v0 or v1, newer than each module's
#     released versions;
#   - the working tree is clean (the release is the commit, nothing beside it);
#   - each module's CHANGELOG.md has a "## [X.Y.Z] - YYYY-MM-DD" entry for it, and its
#     LICENSE and NOTICE are copies of the repository's;
#   - each sibling a module requires is released in this run or at an existing tag;
#   - unless --no-push: HEAD is on a branch, the remote (--remote, default origin) is
#     configured and reachable, and has none of the tags yet.
# Then, module by module in release order, it sets the requirements on the siblings
# released in this run to VERSION (and go.work's matching replace lines), refreshes
# go.sum, and builds, vets and tests the module with GOWORK=off against exactly the
# versions it names, served by a file-based GOPROXY (scripts/modproxy): released
# siblings from their tags, this run's from the tree. Last it commits those go.mod, go.sum
# and go.work changes, creates the tags and pushes the branch and the tags to the remote
# in one atomic push: the remote gets all of them or none, so no tag is published on a
# commit its branch does not hold. --no-push leaves the push to you (it says how), and
# --push-only does that push later, for tags a release created with --no-push or whose
# push failed (they must exist and be on HEAD).
#
# --dry-run does all of it in a scratch worktree of HEAD and creates neither the commit
# nor the tags; its push is git push --dry-run of the branch, which checks that the
# remote would take it and changes nothing there. --no-test (with --dry-run only) builds
# and vets each module alone but leaves its tests out: how scripts/test.sh exercises the
# release after running every module's tests itself, so the suite does not run them
# twice.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
# shellcheck source=scripts/lib/modproxy.sh
. "$top/scripts/lib/modproxy.sh"

die() { echo "release: $*" >&2; exit 1; }

usage="usage: scripts/release.sh [--dry-run [--no-test]] [--remote NAME] [--no-push | --push-only] VERSION [MODULE...]"
dry_run=false
run_tests=true
push=true
push_only=false
remote=origin
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=true ;;
    --no-test) run_tests=false ;;
    --no-push) push=false ;;
    --push-only) push_only=true ;;
    --remote)
      [ $# -ge 2 ] && [ -n "$2" ] || die "--remote needs a remote's name ($usage)"
      remote=$2
      shift
      ;;
    --remote=*) remote=${1#--remote=} ;;
    -*) die "unknown flag $1 ($usage)" ;;
    *) args+=("$1") ;;
  esac
  shift
done
[ ${#args[@]} -ge 1 ] || die "$usage"
$dry_run || $run_tests || die "--no-test is for --dry-run only: a release is tested"
$push || ! $push_only || die "--no-push and --push-only contradict each other"
[ -n "$remote" ] || die "--remote needs a remote's name ($usage)"
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

# push_problems: why the branch and this run's tags cannot be pushed to the remote, one a
# line (nothing when they can): checked before anything changes, since a release whose
# tags are made but cannot be published is half done.
branch=$(git symbolic-ref -q --short HEAD || true)
push_problems() {
  [ -n "$branch" ] ||
    echo "HEAD is detached: check out the branch the release goes on (its commit and tags are pushed together)"
  if ! git remote get-url "$remote" >/dev/null 2>&1; then
    echo "there is no remote $remote to push to (git remote -v lists them; --remote NAME picks one, --no-push pushes nothing)"
    return
  fi
  local refs out
  refs=("${set_ordered[@]/%//$version}")
  if ! out=$(git ls-remote --tags "$remote" "${refs[@]/#/refs/tags/}" 2>&1); then
    echo "cannot reach remote $remote: $out"
    return
  fi
  while read -r _ ref; do
    [ -n "$ref" ] && echo "remote $remote has ${ref#refs/tags/} already: a pushed tag is never moved (release a new version)"
  done <<<"$out"
}

# push_release: the branch and the tags to the remote, atomically.
push_release() {
  local tagrefs=("${set_ordered[@]/%//$version}")
  tagrefs=("${tagrefs[@]/#/refs/tags/}")
  if ! git push --atomic "$remote" "HEAD:refs/heads/$branch" "${tagrefs[@]}"; then
    die "the push to $remote failed: nothing was published, and the commit and tags are here; fix it and run scripts/release.sh --push-only $version ${args[*]:1}"
  fi
  echo "release: pushed $branch and ${tagrefs[*]#refs/tags/} to $remote"
}

if $push_only; then
  problems=()
  for dir in "${set_ordered[@]}"; do
    if ! tagged "$dir" "$version"; then
      problems+=("there is no tag $dir/$version to push: a release creates it")
    elif [ "$(git rev-parse "refs/tags/$dir/$version^{commit}")" != "$(git rev-parse HEAD)" ]; then
      problems+=("tag $dir/$version is not on HEAD: check out the release's commit on its branch")
    fi
  done
  mapfile -t -O ${#problems[@]} problems < <(push_problems)
  if [ ${#problems[@]} -gt 0 ]; then
    printf 'release: %s\n' "${problems[@]}" >&2
    exit 1
  fi
  if $dry_run; then
    tagrefs=("${set_ordered[@]/%//$version}")
    git push --dry-run --atomic "$remote" "HEAD:refs/heads/$branch" "${tagrefs[@]/#/refs/tags/}" ||
      die "remote $remote would refuse the push"
    echo "release: dry run passed; would push: git push --atomic $remote HEAD:refs/heads/$branch ${tagrefs[*]}"
    exit 0
  fi
  push_release
  exit 0
fi

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
if $push; then
  mapfile -t -O ${#problems[@]} problems < <(push_problems)
fi
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
  if $push; then
    # The branch as it is now: the remote must take it (a fast-forward, push rights);
    # --dry-run sends nothing.
    git push --dry-run "$remote" "HEAD:refs/heads/$branch" || die "remote $remote would refuse branch $branch"
    echo "release: and push them: git push --atomic $remote HEAD:refs/heads/$branch ${set_ordered[*]/%//$version}"
  fi
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
if $push; then
  push_release
else
  echo "release: publish with: scripts/release.sh --push-only --remote $remote $version ${args[*]:1}"
fi
