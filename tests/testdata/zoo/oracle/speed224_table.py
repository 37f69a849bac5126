"""Turn speed224.sh's log into speed224.txt's tables (medians over rounds).

    python3 speed224_table.py LOG
"""
import json
import statistics
import sys

MODELS = ["mobilenet_v3_large", "mnasnet0_5", "regnet_x_400mf", "shufflenet_v2_x1_0", "bert_encoder"]
fx, ao, loads = {}, {}, []
for line in open(sys.argv[1]):
    p = line.split(maxsplit=8)
    if p[0] in ("round", "end"):
        loads.append(line.strip())
    elif p[0] == "fxquant" and p[3] != "FAILED":
        fx.setdefault((p[1], p[2]), []).append(
            dict(wall=float(p[3]), cpu=float(p[4]) + float(p[5]), rss=int(p[6]) / 1024))
    elif p[0] == "torchao" and len(p) > 7:
        j = json.loads(p[7] + (" " + p[8] if len(p) > 8 else ""))
        ao.setdefault((p[1], p[2]), []).append(
            dict(wall=j["wall_s"], cpu=j["cpu_s"], pwall=float(p[3]), pcpu=float(p[4]) + float(p[5]),
                 rss=int(p[6]) / 1024, steps=j["steps_wall_s"]))


def med(rs, k):
    return statistics.median(r[k] for r in rs)


def span(rs, k):
    v = [r[k] for r in rs]
    return "%.2f-%.2f" % (min(v), max(v))


n = max(len(v) for v in fx.values())
print("Medians of %d interleaved rounds (wall s / CPU s). torchao = the flow inside one process, after imports." % n)
print("ratio = torchao / fxquant at the same thread setting (2 = torch default threads vs GOMAXPROCS=2, 1 = one thread each); RSS = peak resident MiB of the whole process.")
print()
h = "| model | torchao 2 thr wall/CPU | torchao 1 thr wall/CPU | fxquant GOMAXPROCS=2 wall/CPU | fxquant GOMAXPROCS=1 wall/CPU | wall ratio 2 / 1 | CPU ratio 2 / 1 | fxquant RSS 2 / 1 | torchao RSS |"
print(h)
print("|---" * (h.count("|") - 1) + "|")
for m in MODELS:
    a2, a1, f2, f1 = ao.get((m, "2")), ao.get((m, "1")), fx.get((m, "2")), fx.get((m, "1"))
    if not (a2 and a1 and f2 and f1):
        print("| %s | missing |" % m)
        continue
    print("| %s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.1fx / %.1fx | %.1fx / %.1fx | %.0f / %.0f | %.0f |" % (
        m, med(a2, "wall"), med(a2, "cpu"), med(a1, "wall"), med(a1, "cpu"), med(f2, "wall"), med(f2, "cpu"),
        med(f1, "wall"), med(f1, "cpu"), med(a2, "wall") / med(f2, "wall"), med(a1, "wall") / med(f1, "wall"),
        med(a2, "cpu") / med(f2, "cpu"), med(a1, "cpu") / med(f1, "cpu"),
        med(f2, "rss"), med(f1, "rss"), med(a1, "rss")))
print()
print("Ranges (min-max wall s over the rounds), and torchao's whole process (python + imports + flow, median wall / CPU s):")
print()
print("| model | torchao 2 thr | torchao 1 thr | fxquant 2 | fxquant 1 | torchao process 2 thr | torchao process 1 thr |")
print("|---|---|---|---|---|---|---|")
for m in MODELS:
    a2, a1, f2, f1 = ao.get((m, "2")), ao.get((m, "1")), fx.get((m, "2")), fx.get((m, "1"))
    if not (a2 and a1 and f2 and f1):
        continue
    print("| %s | %s | %s | %s | %s | %.2f / %.2f | %.2f / %.2f |" % (
        m, span(a2, "wall"), span(a1, "wall"), span(f2, "wall"), span(f1, "wall"),
        med(a2, "pwall"), med(a2, "pcpu"), med(a1, "pwall"), med(a1, "pcpu")))
print()
print("torchao's steps, 1 thread (median wall s): load / prepare / calibrate 32 / convert / export / save")
print()
for m in MODELS:
    a1 = ao.get((m, "1"))
    if a1:
        print("  %-20s " % m + " / ".join("%.2f" % statistics.median(r["steps"][k] for r in a1)
                                         for k in ("load", "prepare", "calibrate", "convert", "export", "save")))
print()
print("Load average (1, 5, 15 min) at each round's start and at the end:")
for l in loads:
    print("  " + l)
