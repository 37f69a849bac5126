#!/usr/bin/env bash
# Interleaved rounds for flow.txt: the 500-layer MLP's whole flow, one
# thread each side. Per round: fxquant run --no-compare (torchao's steps),
# fxquant run (with the per-node comparison on 2 eval batches), then one
# round of torchao's flow (mlp500_flow.py, timed inside the process).
#   D=/opt/torch-oracle/tmp/flow flow.sh ROUNDS > log
# D is a directory inside the oracle root (/tmp/flow inside it) holding
# fxquant (go build -o $D/fxquant ./cmd/fxquant), mlp500_flow.py and the
# mlp500.float.pt2 that mlp500_flow.py exported on its first run.
# Each line is one run:
#   fxquant-nocompare|fxquant wall_s user_s sys_s maxrss_kb
#   torchao round 0: torchao flow wall W s cpu C s
set -u
D=${D:-/opt/torch-oracle/tmp/flow}
IN=${IN:-/tmp/flow}
PY=${PY:-/work/shared/oracle/py.sh}
rounds=${1:-3}
for r in $(seq 1 "$rounds"); do
  echo "round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  for i in 1 2 3; do
    GOMAXPROCS=1 /usr/bin/time -f "%e %U %S %M" -o "$D/time.fx" "$D/fxquant" run --no-progress --no-compare \
      -o "$D/mlp500.fxquant.pt2" "$D/mlp500.float.pt2" > /dev/null
    echo "fxquant-nocompare $(tail -1 "$D/time.fx")"
    GOMAXPROCS=1 /usr/bin/time -f "%e %U %S %M" -o "$D/time.fx" "$D/fxquant" run --no-progress \
      -o "$D/mlp500.fxquant.pt2" "$D/mlp500.float.pt2" > /dev/null
    echo "fxquant $(tail -1 "$D/time.fx")"
  done
  echo "torchao $("$PY" "$IN/mlp500_flow.py" 500 1 "$IN" 2>/dev/null | tail -1)"
done
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
