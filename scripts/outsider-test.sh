#!/usr/bin/env bash
# The outsider test: uses cubehip's modules as a project outside this repository would,
# with nothing of the workspace. Every module is published from the working tree at a
# candidate version into a file-based GOPROXY (scripts/modproxy); then, in temporary
# modules outside the repository with GOWORK=off:
#   1. each module is fetched alone (go get) and all its packages built;
#   2. a program built against server opens the cpu device and runs a kernel;
#   3. go install .../server/cmd/cubehip@VERSION installs the CLI, and `cubehip devices`
#      runs.
# It fails where an outsider would: a sibling required at a version that was never
# released, or a replace directive in a go.mod (go install refuses those).
#
#   scripts/outsider-test.sh [VERSION]
#
# VERSION defaults to the version the modules' go.mod files require their siblings at,
# which is what the tree would release. A requirement naming any other version must be
# an existing release: it is served from its tag (modules/<name>/<version>).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
# shellcheck source=scripts/lib/modproxy.sh
. "$top/scripts/lib/modproxy.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/cubehip-outsider.XXXXXX")
trap 'rm -rf "$work"' EXIT
log="$work/log"

step() { echo "outsider: $*"; }
# quiet CMD...: runs CMD with its output in the log, shown only when it fails.
quiet() {
  if ! "$@" >"$log" 2>&1; then
    echo "outsider: FAILED: $*" >&2
    sed 's/^/    /' "$log" >&2
    exit 1
  fi
}

build_modproxy "$work"
mp="$work/modproxy"
mapfile -t modules < <("$mp" modules -repo "$top" | cut -d' ' -f1)

# Every sibling requirement, as "DIR VERSION".
requirements=$(for m in "${modules[@]}"; do "$mp" requires -repo "$top" "$m"; done | sort -u)
version=${1:-}
if [ -z "$version" ]; then
  named=$(cut -d' ' -f2 <<<"$requirements" | sed '/^$/d' | sort -u)
  if [ "$(wc -l <<<"$named")" != 1 ] || [ -z "$named" ]; then
    echo "outsider: the modules require their siblings at several versions ($(tr "\n" " " <<<"$named")): name the candidate, scripts/outsider-test.sh VERSION" >&2
    exit 1
  fi
  version=$named
fi
"$mp" version "$version"

specs=()
for m in "${modules[@]}"; do specs+=("$m@$version"); done
while read -r dir v; do
  [ -n "$dir" ] && [ "$v" != "$version" ] || continue
  if git -C "$top" rev-parse -q --verify "refs/tags/$dir/$v" >/dev/null; then
    specs+=("$dir@$v=$dir/$v")
  fi # else an outsider's go get fails on it, and so does this test, with go's words
done <<<"$requirements"
step "publishing ${specs[*]}"
"$mp" publish -repo "$top" -out "$work/proxy" "${specs[@]}"

use_file_proxy "$work/proxy" "$work/modcache"
# -mod=mod: a fresh module's go.mod and go.sum are written by the commands below, as in
# an outsider's first build.
export GOFLAGS="$GOFLAGS -mod=mod"
export CUBEHIP_CACHE_DIR="$work/kernels"
start=$SECONDS

for m in "${modules[@]}"; do
  path="$CUBEHIP_MODULE_PREFIX/$m"
  step "go get $path@$version, alone, and build all its packages"
  mkdir "$work/get-${m##*/}"
  cd "$work/get-${m##*/}"
  quiet go mod init example.com/outsider/get
  quiet go get "$path@$version"
  quiet go build "$path/..."
done

step "a program against server@$version runs a kernel on the cpu device"
mkdir "$work/app"
cd "$work/app"
quiet go mod init example.com/outsider/app
cat >main.go <<'GO'
// An outsider's program: every element of x becomes x[i] + i + 1 on the cpu device.
package main

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/cubehip/cubehip/modules/hipsys"
	_ "github.com/cubehip/cubehip/modules/hipsys/platforms"
	"github.com/cubehip/cubehip/modules/server"
)

const source = `#include <hip/hip_runtime.h>
extern "C" __global__ void addIndex(unsigned* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += i + 1;
}`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	d, err := server.Open(server.Options{Platform: "cpu"})
	if err != nil {
		return err
	}
	defer d.Close()
	const n = 1000
	k := server.NewKernel(source, "addIndex", hipsys.Dim3{X: 64, Y: 1, Z: 1}, []server.Access{server.ReadWrite})
	x, err := d.Alloc(4 * n)
	if err != nil {
		return err
	}
	defer x.Release()
	in := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(in[4*i:], 7)
	}
	if err := d.Write(x, in); err != nil {
		return err
	}
	grid := hipsys.Dim3{X: (n + 63) / 64, Y: 1, Z: 1}
	if err := d.Launch(k, grid, server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(n)}}); err != nil {
		return err
	}
	out, err := d.Read(x)
	if err != nil {
		return err
	}
	for i := range n {
		if got, want := binary.LittleEndian.Uint32(out[4*i:]), uint32(7+i+1); got != want {
			return fmt.Errorf("x[%d] = %d, want %d", i, got, want)
		}
	}
	fmt.Printf("ok: %d elements on %s\n", n, d.Props().Name)
	return nil
}
GO
quiet go get "$CUBEHIP_MODULE_PREFIX/modules/server@$version"
quiet go build -o app .
./app

step "go install $CUBEHIP_MODULE_PREFIX/modules/server/cmd/cubehip@$version"
# go install PKG@VERSION builds outside any module, and refuses -mod.
quiet env GOFLAGS="${GOFLAGS//-mod=mod/}" GOBIN="$work/bin" go install "$CUBEHIP_MODULE_PREFIX/modules/server/cmd/cubehip@$version"
CUBEHIP_PLATFORM=cpu "$work/bin/cubehip" devices >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
grep -q '^cpu device 0: ' "$log" || { echo "outsider: cubehip devices listed no cpu device:" >&2; cat "$log" >&2; exit 1; }
step "cubehip devices: $(grep '^cpu device 0: ' "$log")"
step "passed at $version in $((SECONDS - start))s"
