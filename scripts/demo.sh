#!/usr/bin/env bash
# The main job: installs what it needs, then lists every platform's devices and runs a
# kernel (compile, copy, launch, graph capture and replay, event timing) on the default
# device — the embedded cpu device on a machine with no GPU.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export PATH="$PATH:/usr/local/go/bin"
"$top/scripts/deps.sh"
exec go run ./modules/hipsys/cmd/hipinfo "$@"
