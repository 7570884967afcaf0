#!/usr/bin/env bash
# run.sh (copied to build/gpu/python by scripts/gpu-test.sh): the Python package on a GPU
# machine without Go. Installs the wheel beside it into a fresh venv (no network: numpy, CuPy
# and PyTorch come from the machine's own site packages), runs the test suite against the
# installed wheel on $CUBEHIP_PLATFORM (default nvidia), then the benchmark.
#
#   run.sh [logdir]        ($PYTHON picks the interpreter; ROUNDS the benchmark's rounds)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logs=${1:-$here/logs}
mkdir -p "$logs"
py=${PYTHON:-python3}
export CUBEHIP_PLATFORM=${CUBEHIP_PLATFORM:-nvidia}
wheels=("$here"/cubehip-*.whl)
wheel=${wheels[0]}
export CUBEHIP_WHEEL=$wheel
unset CUBEHIP_LIBRARY

venv=$(mktemp -d)/venv
if "$py" -m venv --system-site-packages "$venv" && "$venv/bin/python" -m pip install --no-index -q "$wheel"; then
  python=$venv/bin/python
else
  # No venv or pip here: the wheel is a zip, its package runs from where it is unpacked.
  echo "run.sh: no working venv/pip; running the unpacked wheel" >&2
  "$py" -c "import zipfile, sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$wheel" "$here/unpacked"
  PYTHONPATH="$here/unpacked"
  export PYTHONPATH
  python=$py
fi
"$python" -c "import pytest, hypothesis" 2>/dev/null || export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$here/site"

status=0
echo "== python tests on $CUBEHIP_PLATFORM ($("$python" --version))"
(cd "$here/tests" && "$python" -m pytest -q -rs -p no:cacheprovider . 2>&1 | tee "$logs/python-tests.log"; exit "${PIPESTATUS[0]}") || status=1
echo "== python benchmark"
"$python" "$here/benchmarks/bench.py" --rounds "${ROUNDS:-7}" --json "$logs/python-bench.json" 2>&1 | tee "$logs/python-bench.log" || status=1
echo "== exchange: each step of a DLPack exchange, cubehip beside CuPy"
"$python" "$here/benchmarks/exchange.py" --rounds "${ROUNDS:-7}" 2>&1 | tee "$logs/exchange.log" || status=1
echo "== kernels: the same source through cubehip and CuPy"
"$python" "$here/benchmarks/kernels.py" --rounds "${ROUNDS:-7}" 2>&1 | tee "$logs/kernels.log" || status=1
exit $status
