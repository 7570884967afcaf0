#!/usr/bin/env bash
# Exercises scripts/release.sh in a scratch repository made from the working tree (its
# tracked files and the untracked ones git would track), so the real repository's tags
# and branches are never touched and uncommitted work is tested too:
#   - what it must refuse, each with its reason: a version that is not semver or needs
#     a /vN module path, a dirty tree, a version with no CHANGELOG entry, a version not
#     newer than a released one, a module that is not in go.work;
#   - a dry run at the version the modules require their siblings at (the next release),
#     which sets the requirements, builds and tests every module with GOWORK=off against
#     a file-based proxy, and changes nothing: no commit, no tag, a clean tree, nothing
#     pushed;
#   - the push, to a bare repository standing for origin: what it refuses before
#     anything changes (no such remote, an unreachable one, a detached HEAD, a tag the
#     remote has already), an atomic push the remote refuses publishing nothing, a dry
#     run pushing nothing, and --push-only publishing the branch and every tag.
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
# origin is a bare repository beside the scratch one, holding its branch as it is.
git init -q --bare "$work/origin.git"
git remote add origin "$work/origin.git"
git remote add gone "$work/no-such-repository.git"
branch=$(git symbolic-ref --short HEAD)
git push -q origin "HEAD:refs/heads/$branch"
base=$(git rev-parse HEAD)
remote_refs() { git ls-remote origin | sort; }

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
refuses "a remote that is not configured" "there is no remote nosuch" --dry-run --remote nosuch "$version"
refuses "a remote it cannot reach" "cannot reach remote gone" --dry-run --remote gone "$version"
refuses "both --no-push and --push-only" "contradict" --dry-run --no-push --push-only "$version"
git checkout -q --detach
refuses "a detached HEAD" "HEAD is detached" --dry-run "$version"
git checkout -q "$branch"
git tag modules/memory/"$version"
git push -q origin refs/tags/modules/memory/"$version"
git tag -d modules/memory/"$version" >/dev/null
refuses "a tag the remote has already" "remote origin has modules/memory/$version already" --dry-run "$version"
git push -q origin :refs/tags/modules/memory/"$version"
refuses "--push-only before the tags exist" "there is no tag modules/hipsys/$version to push" --push-only "$version"

head=$(git rev-parse HEAD)
before=$(remote_refs)
# The suite has just run every module's tests: the dry run builds and vets each module
# alone against the versions it names, and leaves the tests out (--no-test).
echo "release-test: release.sh --dry-run --no-test $version"
out=$(./scripts/release.sh --dry-run --no-test "$version" 2>&1) || { echo "$out" >&2; exit 1; }
echo "$out"
[ "$(git rev-parse HEAD)" = "$head" ] || { echo "release-test: FAIL: the dry run moved HEAD" >&2; failures=$((failures + 1)); }
[ -z "$(git tag --list)" ] || { echo "release-test: FAIL: the dry run created tags: $(git tag --list)" >&2; failures=$((failures + 1)); }
[ -z "$(git status --porcelain)" ] || { echo "release-test: FAIL: the dry run changed the tree: $(git status --porcelain)" >&2; failures=$((failures + 1)); }
[ -z "$(git worktree list | sed 1d)" ] || { echo "release-test: FAIL: the dry run left a worktree" >&2; failures=$((failures + 1)); }
[ "$(remote_refs)" = "$before" ] || { echo "release-test: FAIL: the dry run pushed: $(remote_refs)" >&2; failures=$((failures + 1)); }
grep -q "and push them: git push --atomic origin HEAD:refs/heads/$branch modules/hipsys/$version" <<<"$out" ||
  { echo "release-test: FAIL: the dry run did not say what it would push" >&2; failures=$((failures + 1)); }

# The push, with the tags a release makes: on a commit of its own, one per module.
git commit -q --allow-empty -m "release commit"
release=$(git rev-parse HEAD)
mapfile -t dirs < <(sed -n 's#^[[:space:]]*\./\(modules/[a-z]*\)$#\1#p' go.work)
for dir in "${dirs[@]}"; do git tag -a "$dir/$version" -m "$dir $version"; done
# A branch the remote will not take (it moved on elsewhere): the atomic push fails whole.
other=$(git commit-tree -p "$base" -m "elsewhere" "$base^{tree}")
git push -q -f origin "$other:refs/heads/$branch"
refuses "a push the remote refuses, publishing nothing" "the push to origin failed" --push-only "$version"
[ -z "$(git ls-remote --tags origin)" ] || { echo "release-test: FAIL: a failed push published tags: $(git ls-remote --tags origin)" >&2; failures=$((failures + 1)); }
git push -q -f origin "$base:refs/heads/$branch"
before=$(remote_refs)
echo "release-test: release.sh --dry-run --push-only $version"
./scripts/release.sh --dry-run --push-only "$version"
[ "$(remote_refs)" = "$before" ] || { echo "release-test: FAIL: --dry-run --push-only pushed: $(remote_refs)" >&2; failures=$((failures + 1)); }
echo "release-test: release.sh --push-only $version"
./scripts/release.sh --push-only "$version"
[ "$(git ls-remote origin "refs/heads/$branch" | cut -f1)" = "$release" ] || { echo "release-test: FAIL: the push did not publish the branch" >&2; failures=$((failures + 1)); }
for dir in "${dirs[@]}"; do
  [ "$(git ls-remote origin "refs/tags/$dir/$version^{}" | cut -f1)" = "$release" ] ||
    { echo "release-test: FAIL: the push did not publish $dir/$version on the release commit" >&2; failures=$((failures + 1)); }
done
refuses "tags the remote has already" "already: a pushed tag is never moved" --push-only "$version"

if [ $failures -gt 0 ]; then
  echo "release-test: $failures failed" >&2
  exit 1
fi
echo "release-test: passed"
