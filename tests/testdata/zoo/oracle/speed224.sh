#!/usr/bin/env bash
# Interleaved timing rounds for speed224.txt: per round, per model, per thread
# setting (2, then 1): fxquant run, then torchao's flow (speed224.py time).
#   speed224.sh ROUNDS > log
# D is a directory inside the oracle root (/opt/torch-oracle/tmp/zoo224 is
# /tmp/zoo224 inside) holding fxquant (go build -o $D/fxquant ./cmd/fxquant),
# speed224.py, bert_encoder.float.pt2 (copied from ..) and the NAME.float224.pt2
# files that `speed224.py export` wrote. Each line of the log is one run:
#   fxquant NAME GOMAXPROCS wall_s user_s sys_s maxrss_kb
#   torchao NAME THREADS proc_wall_s proc_user_s proc_sys_s maxrss_kb {flow JSON}
set -u
D=${D:-/opt/torch-oracle/tmp/zoo224}
IN=${IN:-/tmp/zoo224}
PY=${PY:-/work/shared/oracle/py.sh}
rounds=${1:-3}
models="mobilenet_v3_large mnasnet0_5 regnet_x_400mf shufflenet_v2_x1_0 bert_encoder"
file() { if [ "$1" = bert_encoder ]; then echo "$1.float.pt2"; else echo "$1.float224.pt2"; fi; }
for r in $(seq 1 "$rounds"); do
  echo "round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  for m in $models; do
    f=$(file "$m")
    tok=""; [ "$m" = bert_encoder ] && tok=tokens
    for t in 2 1; do
      o=$(GOMAXPROCS=$t /usr/bin/time -f "%e %U %S %M" -o "$D/time.fx" "$D/fxquant" run "$D/$f" --calibration 32 \
        -o "$D/$m.fxquant.pt2" --no-progress 2>&1) || { echo "fxquant $m $t FAILED"; echo "$o"; }
      echo "fxquant $m $t $(tail -1 "$D/time.fx")"
      j=$(/usr/bin/time -f "%e %U %S %M" -o "$D/time.ao" "$PY" "$IN/speed224.py" time "$IN/$f" $((t == 2 ? 0 : 1)) $tok 2>/dev/null | tail -1)
      echo "torchao $m $t $(tail -1 "$D/time.ao") $j"
    done
  done
done
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
