#!/usr/bin/env bash
# All CUDA checks in one go, for a machine with a GPU (a few minutes):
#   1. tests/test_cuda.py (CPU vs CUDA: same numbers for the same seed), and
#      tests/test_default_device.py under torch.set_default_device("cuda"),
#   2. benchmarks/bench_gpu.py: CPU vs GPU feature time on NCI1 -> OUTDIR/gpu.md, and
#      benchmarks/bench_svm_device.py: CPU vs GPU SVM fits -> OUTDIR/svm_gpu.md
#      (need DATA_ROOT with NCI1, ENZYMES and PROTEINS raw folders; skipped without it),
#   3. the examples on CUDA,
#   4. the whole test suite.
# Each step's log goes to OUTDIR/<step>.log; the exit status is 1 if any step failed.
#
# usage: bash benchmarks/gpu_check.sh OUTDIR [DATA_ROOT]
set -u
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bash benchmarks/gpu_check.sh OUTDIR [DATA_ROOT]" >&2
    exit 2
fi
out=$1
data=${2:-}
py=${PYTHON:-python3}
if [ -n "$data" ]; then
    if [ ! -d "$data" ]; then
        echo "gpu_check.sh: error: DATA_ROOT '$data' is not a folder" >&2
        exit 2
    fi
    data=$(cd "$data" && pwd)
fi
if ! "$py" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    echo "gpu_check.sh: error: no CUDA device for $py here (no torch, or torch.cuda.is_available() is False)" >&2
    exit 2
fi
if ! mkdir -p "$out" 2>/dev/null || [ ! -d "$out" ]; then
    echo "gpu_check.sh: error: OUTDIR '$out' cannot be made" >&2
    exit 2
fi
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
status=0
step() {
    local name=$1
    shift
    echo "== $name: $*"
    local t0=$SECONDS
    "$@" >"$out/$name.log" 2>&1
    local rc=$?
    echo "   exit $rc after $((SECONDS - t0)) s; last lines:"
    tail -n 6 "$out/$name.log" | sed 's/^/   | /'
    [ "$rc" -eq 0 ] || status=1
}
"$py" -c "import torch, torch_geometric as g; print('torch', torch.__version__, 'pyg', g.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
step test_cuda "$py" -m pytest -q -p no:warnings -rs tests/test_cuda.py
KONG_TEST_DEFAULT_DEVICE=cuda step default_device "$py" -m pytest -q -p no:warnings tests/test_default_device.py
if [ -n "$data" ]; then
    step bench_gpu "$py" benchmarks/bench_gpu.py --data-root "$data" --out "$out/gpu.md"
    step bench_svm "$py" benchmarks/bench_svm_device.py --data-root "$data" --out "$out/svm_gpu.md" \
        --json "$out/svm_gpu.json"
else
    echo "== bench_gpu skipped: no DATA_ROOT given"
fi
step linear_head "$py" examples/linear_head.py --device cuda
step gnn_with_kong "$py" examples/gnn_with_kong.py --device cuda --in-model
step ordered_vs_shuffled "$py" examples/ordered_vs_shuffled.py
step tests_all "$py" -m pytest -q -p no:warnings -rs
exit $status
