#!/usr/bin/env bash
# ORTune's CUDA check for a GPU machine, in one command:
#
#     bash tests/gpu/run_device_check.sh
#
# It installs what the checks need into a fresh virtual environment (onnxruntime-gpu with
# the CUDA and cuDNN libraries that PyPI ships as nvidia-* wheels), runs the GPU tests plus
# the IO binding tests, then a short IO binding benchmark on CUDA, and prints ONE JSON
# summary on stdout -- also when a step fails: the summary then says which step and why.
# Last, with what time is left, the GPU plugin execution provider (onnxruntime-ep-nv-tensorrt-rtx,
# a package that carries its own libraries): installed without dependencies, so it never
# replaces onnxruntime-gpu, then found, listed and run by the plugin tests. Where it cannot be
# installed or loaded (no wheel, no time, a driver it cannot use) that part is skipped and the
# summary says why; only a plugin test that fails makes the check fail.
# Everything else (the full log, the test report, the benchmark's JSON) goes to $OUT, or a
# new temporary folder when OUT is not set. It stays under 10 minutes: every step gets
# what is left of the budget (ORTUNE_CHECK_BUDGET_S, default 570 seconds).
#
# Needs: Linux x86-64, an NVIDIA driver new enough for CUDA 13 (onnxruntime-gpu 1.31),
# python3.11 or newer with venv (an older Python gets the newest onnxruntime-gpu it can
# install), and pip access to PyPI. A driver older than 580 cannot run CUDA 13: the check
# then takes onnxruntime-gpu 1.26, the last build on PyPI for CUDA 12. ORT_SPEC overrides both.
set -u -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-$(mktemp -d -t ortune-device-XXXXXX)}"
VENV="${ORTUNE_CHECK_VENV:-/tmp/ortune-device-venv}"
BUDGET="${ORTUNE_CHECK_BUDGET_S:-570}"
SUPPORT=(numpy onnx psutil platformdirs pytest nvidia-ml-py)
mkdir -p "$OUT"
LOG="$OUT/device_check.log"
STEPS="$OUT/steps.tsv"
: > "$LOG"
: > "$STEPS"
START=$(date +%s)
PY=""
INSTALLED=""

left() { echo $(( BUDGET - ($(date +%s) - START) )); }

# step NAME SECONDS COMMAND... : run with output to the log, within the budget; record rc and time.
step() {
    local name=$1 limit=$2 t0 rc
    shift 2
    local remaining
    remaining=$(( $(left) - 15 ))
    (( limit > remaining )) && limit=$remaining
    t0=$(date +%s)
    if (( limit < 5 )); then
        printf '%s\t%s\t%s\n' "$name" "out-of-time" 0 >> "$STEPS"
        return 124
    fi
    echo "=== $name (limit ${limit}s): $*" >> "$LOG"
    timeout --kill-after=10 "$limit" "$@" >> "$LOG" 2>&1
    rc=$?
    printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" >> "$STEPS"
    return $rc
}

summarize() {
    trap - EXIT
    local python=${PY:-python3}
    [[ -x "$VENV/bin/python" ]] || python=python3
    OUT="$OUT" ROOT="$ROOT" INSTALLED="$INSTALLED" PLUGIN="$PLUGIN" PLUGIN_SPEC="${PLUGIN_SPEC:-}" ELAPSED=$(( $(date +%s) - START )) \
        "$python" "$ROOT/tests/gpu/device_summary.py" 2>>"$LOG" || \
        printf '{"check": "ortune-device-check", "ok": false, "problems": ["the summary could not be written; see %s"]}\n' "$LOG"
}
trap summarize EXIT

cd "$ROOT" || exit 1
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
else
    echo "nvidia-smi not found" > "$OUT/gpu.txt"
fi
DRIVER_MAJOR=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 | cut -d. -f1)
if [[ "$DRIVER_MAJOR" =~ ^[0-9]+$ ]] && (( DRIVER_MAJOR < 580 )); then
    SPECS=("${ORT_SPEC:-onnxruntime-gpu[cuda,cudnn]==1.26.*}" "onnxruntime-gpu[cuda,cudnn]<1.27" "onnxruntime-gpu<1.27")
    PLUGIN_SPEC="${PLUGIN_SPEC:-onnxruntime-ep-nv-tensorrt-rtx-cu12}"
else
    SPECS=("${ORT_SPEC:-onnxruntime-gpu[cuda,cudnn]==1.31.*}" "onnxruntime-gpu[cuda,cudnn]" "onnxruntime-gpu")
    PLUGIN_SPEC="${PLUGIN_SPEC:-onnxruntime-ep-nv-tensorrt-rtx-cu13}"
fi
PLUGIN=""
uname -sr > "$OUT/kernel.txt" 2>&1

for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && \
        "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        PY=$candidate
        break
    fi
done
PY=${PY:-python3}
"$PY" --version > "$OUT/python.txt" 2>&1

# A fresh environment; it also sees the machine's own packages, in case PyPI cannot be reached.
rm -rf "$VENV"
if step venv 120 "$PY" -m venv --system-site-packages "$VENV"; then
    VPY="$VENV/bin/python"
    PIP=("$VPY" -m pip install --disable-pip-version-check --progress-bar off -q)
else
    mkdir -p "$VENV/site"
    VPY="$PY"
    export PYTHONPATH="$VENV/site"
    PIP=("$PY" -m pip install --disable-pip-version-check --progress-bar off -q --target "$VENV/site")
fi

# The pinned build with pip's CUDA + cuDNN 9 wheels first, then whatever onnxruntime-gpu
# this Python can get with its libraries, then the bare package.
for spec in "${SPECS[@]}"; do
    if step "install $spec" 420 "${PIP[@]}" "$spec" "${SUPPORT[@]}"; then
        INSTALLED=$spec
        break
    fi
done

# onnxruntime-gpu looks for CUDA and cuDNN on the library path; the nvidia-* wheels put
# them under site-packages/nvidia/*/lib, which the loader does not search by itself.
NVIDIA_LIBS=$("$VPY" - <<'PY' 2>>"$LOG"
import glob, os, site, sys
roots = list(site.getsitepackages()) + [p for p in sys.path if p.endswith(("site-packages", "site"))]
found = []
for root in dict.fromkeys(roots):
    found += sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib")))
print(":".join(dict.fromkeys(found)))
PY
)
echo "$NVIDIA_LIBS" | tr ':' '\n' > "$OUT/cuda_libs.txt"
export LD_LIBRARY_PATH="${NVIDIA_LIBS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export ORTUNE_CONFIG_DIR="$OUT/config" ORTUNE_DATA_DIR="$OUT/data"

step ort-info 60 "$VPY" -c 'import json, onnxruntime as o
json.dump({"version": o.__version__, "in_build": o.get_available_providers(), "build": o.get_build_info()},
          open("'"$OUT"'/ort.json", "w"))'
step devices 120 bash -c '"$0" -m app devices --json > "$1/devices.json"' "$VPY" "$OUT"
step tests 300 "$VPY" -m pytest tests/gpu tests/core/iobinding/test_iobinding.py tests/cli/test_iobinding.py \
    --ignore=tests/gpu/test_plugin_eps.py -q -rs -p no:cacheprovider --junitxml="$OUT/junit.xml"
step benchmark 150 bash -c '"$0" benchmarks/iobinding.py --provider cuda --batch 32 --size 224 --iterations 200 > "$1/benchmark.json"' \
    "$VPY" "$OUT"

# The GPU plugin EP with what is left (it downloads ~150 MB): never with less than two minutes.
if [[ -z "$INSTALLED" ]]; then
    echo "onnxruntime-gpu was not installed" > "$OUT/plugin_skipped.txt"
elif (( $(left) < 120 )); then
    echo "too little time was left ($(left) s) after the CUDA checks" > "$OUT/plugin_skipped.txt"
elif step "install $PLUGIN_SPEC" 150 "${PIP[@]}" --no-deps "$PLUGIN_SPEC"; then
    PLUGIN=$PLUGIN_SPEC
    step plugin-tests 150 "$VPY" -m pytest tests/gpu/test_plugin_eps.py -q -rs -p no:cacheprovider \
        --junitxml="$OUT/plugin_junit.xml"
else
    echo "pip could not install $PLUGIN_SPEC (see the log)" > "$OUT/plugin_skipped.txt"
fi
exit 0
