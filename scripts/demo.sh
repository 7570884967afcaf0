#!/usr/bin/env bash
# The main job: installs what it needs, then runs `cubehip demo` on the default device —
# the embedded cpu device on a machine with no GPU: compile kernels, move data, launch,
# capture a graph and replay it, profile, show the memory report, and catch an injected
# failure on exactly the buffers it touched.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export PATH="$PATH:/usr/local/go/bin"
"$top/scripts/deps.sh"
exec go run ./modules/server/cmd/cubehip demo "$@"
