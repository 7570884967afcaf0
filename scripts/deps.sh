#!/usr/bin/env bash
# Installs what building and testing cubehip needs on a fresh Debian/Ubuntu machine, or says
# exactly what is missing when it cannot install (not root, no apt).
#
#   Go 1.26+             the toolchain (https://go.dev/dl; not installed here: say so)
#   gcc, g++             cgo, and the cpu platform's kernel compiler ($CXX)
#   pkgconf              pkg-config, with which C hosts find libcubehip (tested by the C ABI)
#   libamdhip64-dev      ROCm's HIP runtime and hiprtc (Debian ships ROCm 5.2): the amd platform
#                        opens the real library and compiles kernels for AMD GPUs with it
#   staticcheck          scripts/lint.sh's linter, from the Go module proxy, pinned below
set -euo pipefail

export PATH="$PATH:/usr/local/go/bin"
missing=()
command -v go >/dev/null || { echo "deps: Go 1.26 or newer is required (https://go.dev/dl), not found on PATH" >&2; exit 1; }

need_pkgs=()
command -v gcc >/dev/null || need_pkgs+=(gcc)
command -v g++ >/dev/null || need_pkgs+=(g++)
command -v pkg-config >/dev/null || need_pkgs+=(pkgconf)   # the C ABI's install test builds a host with pkg-config
# Checked by file, not by dpkg, so a ROCm installed from AMD's own repositories counts too.
# The headers matter as well as the library: ROCm before 6.1 compiles kernels with hiprtc
# against the HIP headers on disk.
if [ ! -e /usr/include/hip/hiprtc.h ] && [ ! -e /opt/rocm/include/hip/hiprtc.h ]; then
  if [ "$(uname -m)" = x86_64 ]; then need_pkgs+=(libamdhip64-dev); fi
fi

if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing ${need_pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
  else
    missing+=("${need_pkgs[@]}")
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: missing Debian packages: ${missing[*]} (run: apt-get install ${missing[*]})" >&2
  exit 1
fi

# Go modules of every workspace module, so the tests below run offline-safe.
top=$(cd "$(dirname "$0")/.." && pwd)
for m in $(sed -n 's#^[[:space:]]*\./\(modules/[^[:space:])]*\).*#\1#p' "$top/go.work"); do
  (cd "$top/$m" && go mod download)
done

# staticcheck, pinned: a newer release can add checks, and a finding must come from a change
# to the code, not to the linter. v0.8.2 (2026.2.2) is the newest release, checked with Go 1.26.
staticcheck_version=v0.8.2
gobin="$(go env GOPATH)/bin"
if ! "$gobin/staticcheck" -version 2>/dev/null | grep -q "(${staticcheck_version#v})"; then
  echo "deps: installing staticcheck $staticcheck_version"
  go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" || {
    echo "deps: cannot install staticcheck $staticcheck_version from the Go module proxy ($(go env GOPROXY))" >&2
    exit 1
  }
fi

# --- releases: the release tooling and the workflow linter --------------------------------
# scripts/modproxy (the file-based module proxy of release.sh and the outsider test) is
# its own module outside go.work: its modules too, so its tests run offline-safe.
(cd "$top/scripts/modproxy" && GOWORK=off go mod download)
# actionlint checks .github/workflows (test.sh runs it when installed). Pinned, so a new
# release's new checks never fail a build that changed nothing; from the Go module proxy.
actionlint_version=v1.7.12
if ! "$(go env GOPATH)/bin/actionlint" -version 2>/dev/null | grep -qx "$actionlint_version"; then
  echo "deps: installing actionlint $actionlint_version"
  (cd "$top" && GOWORK=off go install "github.com/rhysd/actionlint/cmd/actionlint@$actionlint_version") ||
    echo "deps: could not install actionlint $actionlint_version; test.sh will not lint the workflows" >&2
fi

# --- the Python package (bindings/python): Debian's python3-* packages, no PyPI -----------
#   python3-numpy        the package's one runtime dependency
#   python3-pytest       its test suite; python3-hypothesis its property tests
#   python3-setuptools, python3-wheel, python3-build   scripts/build-wheel.sh
#   python3-venv         the wheel test installs the wheel into a fresh virtual environment
#   python3-dev          Python.h, which the package's extension module (cubehip._native) is
#                        compiled against (the wheel, and the tests' in-place build)
#   python3-mpi4py, openmpi-bin   the mpi4py test: two processes under mpirun (Open MPI, Debian's
#                        default MPI, which python3-mpi4py is built against) pass cpu-device arrays
py_pkgs=()
for m in numpy:python3-numpy pytest:python3-pytest hypothesis:python3-hypothesis \
  setuptools:python3-setuptools wheel:python3-wheel build:python3-build ensurepip:python3-venv \
  mpi4py:python3-mpi4py; do
  /usr/bin/python3 -c "import ${m%%:*}" 2>/dev/null || py_pkgs+=("${m#*:}")
done
command -v mpirun >/dev/null || py_pkgs+=(openmpi-bin)
# The headers of the interpreter itself, where its sysconfig says they are.
py_include=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null || true)
[ -n "$py_include" ] && [ -f "$py_include/Python.h" ] || py_pkgs+=(python3-dev)
if [ ${#py_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing ${py_pkgs[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${py_pkgs[@]}" >/dev/null || {
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${py_pkgs[@]}" >/dev/null
    }
  else
    echo "deps: missing Debian packages for the Python package: ${py_pkgs[*]} (run: apt-get install ${py_pkgs[*]})" >&2
    exit 1
  fi
fi
