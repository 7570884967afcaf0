#!/usr/bin/env bash
# Exercises scripts/release.sh in a scratch repository made from the working tree (its
# tracked files and the untracked ones git would track), so the real repository's tags
# and branches are never touched and uncommitted work is tested too:
#   - what it must refuse, each with its reason: a version that is not semver or needs
#     a /vN module path, a dirty tree, a version with no CHANGELOG entry, a version not
#     newer than a released one, a module that is not in go.work;
#   - a dry run at the version the modules require their siblings at (the next release),
#     which sets the requirements, builds and tests every module with GOWORK=off against
#     a file-based proxy, and changes nothing: no commit, no tag, a clean tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"

work=$(mktemp -d "${TMPDIR:-/tmp}/cubehip-release-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
mkdir "$repo"
(
  cd "$top"
  git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
    # A tracked file deleted in the tree is not part of it.
    if [ -e "$f" ] || [ -L "$f" ]; then cp --parents --no-dereference -t "$repo" "$f"; fi
  done
)
cd "$repo"
git init -q
git -c user.name=release-test -c user.email=release-test@localhost add -A
git -c user.name=release-test -c user.email=release-test@localhost commit -q -m scratch
export GIT_AUTHOR_NAME=release-test GIT_AUTHOR_EMAIL=release-test@localhost
export GIT_COMMITTER_NAME=release-test GIT_COMMITTER_EMAIL=release-test@localhost

# The version the go.mod files name for the siblings: the release the tree is ready for.
version=$(sed -n 's#^[[:space:]]*github.com/cubehip/cubehip/modules/[a-z]* \(v[^ ]*\).*#\1#p' modules/*/go.mod | sort -u)
[ "$(wc -l <<<"$version")" = 1 ] || { echo "release-test: the modules require their siblings at several versions: $version" >&2; exit 1; }

failures=0
# refuses WHY PATTERN ARGS...: release.sh ARGS must fail, saying PATTERN.
refuses() {
  local why=$1 pattern=$2 out
  shift 2
  if out=$(./scripts/release.sh "$@" 2>&1); then
    echo "release-test: FAIL: release.sh $* passed; it must refuse $why" >&2
    failures=$((failures + 1))
  elif ! grep -q -- "$pattern" <<<"$out"; then
    echo "release-test: FAIL: release.sh $* refused $why without saying \"$pattern\":" >&2
    sed 's/^/    /' <<<"$out" >&2
    failures=$((failures + 1))
  else
    echo "release-test: refuses $why"
  fi
}

refuses "a version that is not semver" "is not of the form" --dry-run 0.1
refuses "v2, which needs a /v2 module path" "needs its path to end in /v2" --dry-run v2.0.0
refuses "a module not in go.work" "is not a module of go.work" --dry-run "$version" nosuch
refuses "a version with no CHANGELOG entry" "CHANGELOG.md has no \"## \[0.9.9\] - " --dry-run v0.9.9
echo scratch >untracked.txt
refuses "a dirty working tree" "the working tree is not clean" --dry-run "$version"
rm untracked.txt
git tag modules/hipsys/"$version"
refuses "a version not newer than a released one" "is not newer than the released $version" --dry-run "$version" hipsys
git tag -d modules/hipsys/"$version" >/dev/null
# stream alone cannot be released while the hipsys and memory versions it requires are not.
refuses "a sibling neither released nor in the release" "which is neither released" --dry-run "$version" stream

head=$(git rev-parse HEAD)
# The suite has just run every module's tests: the dry run builds and vets each module
# alone against the versions it names, and leaves the tests out (--no-test).
echo "release-test: release.sh --dry-run --no-test $version"
./scripts/release.sh --dry-run --no-test "$version"
[ "$(git rev-parse HEAD)" = "$head" ] || { echo "release-test: FAIL: the dry run moved HEAD" >&2; failures=$((failures + 1)); }
[ -z "$(git tag --list)" ] || { echo "release-test: FAIL: the dry run created tags: $(git tag --list)" >&2; failures=$((failures + 1)); }
[ -z "$(git status --porcelain)" ] || { echo "release-test: FAIL: the dry run changed the tree: $(git status --porcelain)" >&2; failures=$((failures + 1)); }
[ -z "$(git worktree list | sed 1d)" ] || { echo "release-test: FAIL: the dry run left a worktree" >&2; failures=$((failures + 1)); }

if [ $failures -gt 0 ]; then
  echo "release-test: $failures failed" >&2
  exit 1
fi
echo "release-test: passed"
