#!/usr/bin/env python3
"""Summarises spk-bench JSON files as Markdown tables for docs/PERFORMANCE.md.

usage: summarize.py [--large] [--formats | --coo | --compound | --hisparse] RESULT.json [...]
  --hisparse the HiSparse acceptance figures from the JSON files of perf_tests/device/hisparse.sh
             read together (spk-bench --mode N and T, spk-add, spk-bench --memory-only): SpMV
             T and N against cuSPARSE CSR (best of ALG1/ALG2), HiSparse T/N per matrix, the
             matrices where cuSPARSE T is much slower than its N, addition against cuSPARSE
             csrgeam2 per op (with and without the explicit transposes), memory over CSR
  --compound compound-entry runs (spk-bench --scalar quaternion64 ...): per matrix the default
             CSR-AoS-AoS layout, the best layout and schedule measured, spk::make_tuned's matrix
             ("compound-tuned"), each against cuSPARSE (complex CSR, BSR, 4x4-BSR expansion),
             then the memory of every outer x inner layout relative to CSR-AoS
  --large    table rows for the large matrices only (the geometric means still cover all)
  --formats  one table of every format instead: per matrix and format, the speed-up of the
             format's default parameters ("auto:" / "default") and of its best variant over
             cuSPARSE CSR ALG1, and its memory over CSR; geometric means per format

For each matrix: the best spk CSR schedule, the default heuristic's choice ("auto:"), cuSPARSE
CSR ALG1/ALG2/COO and Kokkos Kernels, as median milliseconds, the speed-up over cuSPARSE CSR ALG1
and the fraction of the copy bandwidth. Then geometric means over the large matrices
(>= 20M nonzeros) and over all.
"""
import json
import lzma
import re
import math
import sys
from collections import defaultdict


def open_record(path):
    """A JSON record under docs/perf: plain, or xz-compressed (.json.xz) for the large ones."""
    return lzma.open(path, "rt") if str(path).endswith(".xz") else open(path)

LARGE_NNZ = 20_000_000


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def summarize(path, large_only=False):
    with open_record(path) as f:
        run = json.load(f)
    rows = defaultdict(list)
    for r in run["results"]:
        rows[(r["matrix"], r["mode"])].append(r)
    print(f"### {path}\n")
    print(f"GPU: {run['gpu']}; date: {run['date']}; commit: {run['commit']}; "
          f"copy bandwidth: {run['copy_bandwidth_gbps']:.0f} GB/s\n")
    print(f"Command: `{run['command']}`\n")
    print("| matrix | mode | nnz | best spk schedule | best ms | auto ms | auto/best | "
          "cuSPARSE ALG1 ms | best vs ALG1 | auto vs ALG1 | ALG2 ms | COO ms | KK ms | "
          "best %copy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    agg = defaultdict(list)
    for (matrix, mode), rs in rows.items():
        spk = [r for r in rs if r["format"] == "csr" and r.get("correct", True)]
        if not spk:
            continue
        best = min(spk, key=lambda r: r["median_ms"])
        auto = next((r for r in spk if r["variant"].startswith("auto:")), None)
        by = {r["format"]: r for r in rs}
        alg1 = by.get("cusparse-csr-alg1")
        alg2 = by.get("cusparse-csr-alg2")
        coo = by.get("cusparse-coo")
        kk = by.get("kokkoskernels")
        ms = lambda r: f"{r['median_ms']:.4f}" if r else "-"
        ratio = lambda a, b: (b["median_ms"] / a["median_ms"]) if a and b else None
        fmt = lambda x: f"{x:.2f}" if x else "-"
        best_vs = ratio(best, alg1)
        auto_vs = ratio(auto, alg1)
        auto_best = (auto["median_ms"] / best["median_ms"]) if auto else None
        if not large_only or best["nnz"] >= LARGE_NNZ:
                print(f"| {matrix} | {mode} | {best['nnz']} | {best['variant']} | {ms(best)} | "
                  f"{ms(auto)} | {fmt(auto_best)} | {ms(alg1)} | {fmt(best_vs)} | {fmt(auto_vs)} | "
                  f"{ms(alg2)} "
                  f"| {ms(coo)} | {ms(kk)} | {100 * best['gbps'] / run['copy_bandwidth_gbps']:.0f}% |")
        key = "large" if best["nnz"] >= LARGE_NNZ else "small"
        agg[(key, mode, "best")].append(best_vs)
        agg[(key, mode, "auto")].append(auto_vs)
        agg[(key, mode, "kk")].append(ratio(kk, alg1))
    print()
    for (key, mode, what), xs in sorted(agg.items()):
        xs = [x for x in xs if x]
        if xs:
            print(f"- {key} matrices, mode {mode}, {what} vs cuSPARSE CSR ALG1: geometric mean "
                  f"{geomean(xs):.2f}x, min {min(xs):.2f}x over {len(xs)} matrices")
    print()


FORMATS = ["csr", "ell", "hll", "dia", "hdia", "hyb", "balanced-coo", "compressed-coo",
           "cusparse-sell", "cusparse-coo", "cusparse-csr-alg2", "kokkoskernels"]

# formats also compared with a peer other than cuSPARSE CSR ALG1
PEERS = {"balanced-coo": "cusparse-coo"}


def summarize_formats(path, large_only=False):
    with open_record(path) as f:
        run = json.load(f)
    rows = defaultdict(list)
    for r in run["results"]:
        rows[(r["matrix"], r["mode"])].append(r)
    present = [f for f in FORMATS if any(r["format"] == f for r in run["results"])]
    print(f"### {path} (formats)\n")
    print(f"GPU: {run['gpu']}; date: {run['date']}; commit: {run['commit']}; "
          f"copy bandwidth: {run['copy_bandwidth_gbps']:.0f} GB/s\n")
    print(f"Command: `{run['command']}`\n")
    print("Each cell: default-parameter speed-up / best-variant speed-up over cuSPARSE CSR ALG1 "
          "(memory over CSR); '-' = not run (refused by the padding limit or op not "
          "supported).\n")
    print("| matrix | mode | nnz | ALG1 ms | " + " | ".join(present) + " |")
    print("|---|---|---|---|" + "---|" * len(present))
    agg = defaultdict(list)
    for (matrix, mode), rs in rows.items():
        by = defaultdict(list)
        for r in rs:
            if r.get("correct", True):
                by[r["format"]].append(r)
        alg1 = by.get("cusparse-csr-alg1")
        if not alg1:
            continue
        alg1 = alg1[0]
        csr_mem = next((r["memory_bytes"] for r in by.get("csr", [])), None)
        cells = []
        key = "large" if alg1["nnz"] >= LARGE_NNZ else "small"
        for f in present:
            rs_f = by.get(f)
            if not rs_f:
                cells.append("-")
                continue
            best = min(rs_f, key=lambda r: r["median_ms"])
            dflt = next((r for r in rs_f if r["variant"].startswith("auto:")
                         or r["variant"] in ("default", "slice32")), best)
            b = alg1["median_ms"] / best["median_ms"]
            d = alg1["median_ms"] / dflt["median_ms"]
            mem = f" ({dflt['memory_bytes'] / csr_mem:.2f})" if csr_mem else ""
            cells.append(f"{d:.2f} / {b:.2f}{mem}")
            agg[(key, f, "default")].append(d)
            agg[(key, f, "best")].append(b)
            peer = by.get(PEERS.get(f, ""))
            if peer:
                agg[(key, f, "peer default")].append(peer[0]["median_ms"] / dflt["median_ms"])
                agg[(key, f, "peer best")].append(peer[0]["median_ms"] / best["median_ms"])
        if not large_only or key == "large":
            print(f"| {matrix} | {mode} | {alg1['nnz']} | {alg1['median_ms']:.4f} | "
                  + " | ".join(cells) + " |")
    print()
    for key in ("large", "small"):
        for f in present:
            d, b = agg.get((key, f, "default"), []), agg.get((key, f, "best"), [])
            if d:
                print(f"- {key} matrices, {f}: default {geomean(d):.2f}x, best {geomean(b):.2f}x "
                      f"(geometric mean over {len(d)} matrices it ran on; min default "
                      f"{min(d):.2f}x)")
            pd, pb = agg.get((key, f, "peer default"), []), agg.get((key, f, "peer best"), [])
            if pd:
                print(f"- {key} matrices, {f} vs {PEERS[f]}: default {geomean(pd):.2f}x, best "
                      f"{geomean(pb):.2f}x (geometric mean; min default {min(pd):.2f}x)")
    print()


def summarize_coo(path):
    """Issue-5 table: balanced and compressed COO against cuSPARSE CSR ALG1 and COO, with the
    compressed format's bytes over CSR's (cuSPARSE CSR's arrays) and its own-bytes bandwidth."""
    with open_record(path) as f:
        run = json.load(f)
    by = defaultdict(lambda: defaultdict(list))
    for r in run["results"]:
        if r.get("correct", True):
            by[r["matrix"]][r["format"]].append(r)
    print(f"### {path} (COO formats)\n")
    print(f"GPU: {run['gpu']}; date: {run['date']}; commit: {run['commit']}; "
          f"copy bandwidth: {run['copy_bandwidth_gbps']:.0f} GB/s\n")
    print(f"Command: `{run['command']}`\n")
    print("Speed-ups over cuSPARSE CSR ALG1 (default / best variant); balanced COO also over "
          "cuSPARSE COO; compressed memory over CSR bytes and the fraction of copy bandwidth on "
          "its own bytes (default variant).\n")
    print("| matrix | nnz | ALG1 ms | COO ms | balanced vs ALG1 | balanced vs COO | compressed vs "
          "ALG1 | compressed best variant | compressed bytes / CSR | compressed own-bytes % copy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    agg = defaultdict(list)
    for matrix, fs in by.items():
        if "cusparse-csr-alg1" not in fs or "cusparse-coo" not in fs:
            continue
        alg1, coo = fs["cusparse-csr-alg1"][0], fs["cusparse-coo"][0]
        cells = []
        def dflt_best(f):
            rs = fs.get(f, [])
            if not rs:
                return None, None
            best = min(rs, key=lambda r: r["median_ms"])
            # the default launch: "auto:" without a storage prefix (a windows or chunks per
            # warp/team suffix, -wM / -cM, does not count)
            dflt = next((r for r in rs if r["variant"].startswith("auto:") and
                         re.sub(r"-[wc]\d+$", "", r["variant"]).count("-") <= 2), best)
            return dflt, best
        bd, bb = dflt_best("balanced-coo")
        cd, cb = dflt_best("compressed-coo")
        if not bd or not cd:
            continue
        t = alg1["median_ms"]
        agg["balanced default"].append(t / bd["median_ms"])
        agg["balanced vs coo"].append(coo["median_ms"] / bd["median_ms"])
        agg["balanced best vs coo"].append(coo["median_ms"] / bb["median_ms"])
        agg["compressed default"].append(t / cd["median_ms"])
        agg["compressed best"].append(t / cb["median_ms"])
        print(f"| {matrix} | {alg1['nnz']} | {t:.4f} | {coo['median_ms']:.4f} | "
              f"{t / bd['median_ms']:.2f} / {t / bb['median_ms']:.2f} | "
              f"{coo['median_ms'] / bd['median_ms']:.2f} / {coo['median_ms'] / bb['median_ms']:.2f} | "
              f"{t / cd['median_ms']:.2f} / {t / cb['median_ms']:.2f} | {cb['variant']} | "
              f"{cd['memory_bytes'] / alg1['memory_bytes']:.2f} | "
              f"{100 * cd.get('own_copy_fraction', 0):.0f}% |")
    print()
    for k, v in agg.items():
        print(f"- {k}: geometric mean {geomean(v):.2f}x, min {min(v):.2f}x over {len(v)} matrices")
    print()


def summarize_compound(path):
    """Paper-style tables of a compound run: speed-ups per matrix, then memory per layout."""
    with open_record(path) as f:
        run = json.load(f)
    by = defaultdict(list)
    for r in run["results"]:
        by[r["matrix"]].append(r)
    scalar = run["results"][0]["scalar"] if run["results"] else "?"
    print(f"#### {path.split('/')[-1]} ({scalar})\n")
    print(f"GPU: {run['gpu']}; date: {run['date']}; commit: {run['commit']}; copy bandwidth: "
          f"{run['copy_bandwidth_gbps']:.0f} GB/s\n")
    print("| matrix | rows | entries | cuSPARSE | ms | default CSR-AoS-AoS ms | best layout / schedule "
          "| ms | vs default | vs cuSPARSE | %copy | tuned (make_tuned) | ms | vs default | "
          "vs cuSPARSE | other cuSPARSE |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for matrix, rs in by.items():
        comp = [r for r in rs if r["format"] == "compound"]
        if not comp:
            continue
        base = [r for r in rs if r["format"] in ("cusparse-csr-alg1", "cusparse-bsr",
                                                 "cusparse-quat-bsr4")]
        others = [r for r in rs if r["format"].startswith("cusparse") and r not in base]
        d = [r for r in comp if r["variant"].startswith("csr-aos-aos/static")]
        d = d[0] if d else None
        b = min(comp, key=lambda r: r["median_ms"])
        t = [r for r in rs if r["format"] == "compound-tuned"]
        t = t[0] if t else None
        bm = base[0]["median_ms"] if base else float("nan")
        dm = d["median_ms"] if d else float("nan")

        def cells(r):
            if r is None:
                return "– | – | – | –"
            return (f"{r['variant']} | {r['median_ms']:.4f} | {dm / r['median_ms']:.2f} | "
                    f"{bm / r['median_ms']:.2f}")
        other = ", ".join(f"{o['format']} {bm / o['median_ms']:.2f}" for o in others)
        print(f"| {matrix} | {b['rows']} | {b['nnz']} | {base[0]['format'] if base else '–'} | "
              f"{bm:.4f} | {dm:.4f} | {cells(b)} | {100 * b['copy_fraction']:.0f}% | "
              f"{cells(t)} | {other or '–'} |")
    print()
    # memory: bytes of each outer x inner layout (vector layouts do not change the matrix)
    layouts = []
    for rs in by.values():
        for r in rs:
            if r["format"] == "compound":
                li = "-".join(r["variant"].split("/")[0].split("-")[:2])
                if li not in layouts:
                    layouts.append(li)
    print("Memory relative to CSR-AoS (outer-inner layout; the vector layout does not change it):\n")
    print("| matrix | CSR-AoS MB | " + " | ".join(layouts) + " |")
    print("|---|---|" + "---|" * len(layouts))
    for matrix, rs in by.items():
        mem = {}
        for r in rs:
            if r["format"] == "compound":
                mem["-".join(r["variant"].split("/")[0].split("-")[:2])] = r["memory_bytes"]
        if "csr-aos" not in mem:
            continue
        c = mem["csr-aos"]
        print(f"| {matrix} | {c / 1e6:.1f} | " +
              " | ".join(f"{mem[l] / c:.3f}" if l in mem else "–" for l in layouts) + " |")
    print()


# --- HiSparse (perf_tests/device/hisparse.sh) ---------------------------------------------------

CUSPARSE_SPMV = ("cusparse-csr-alg1", "cusparse-csr-alg2")
ADD_OPS = ("NN", "TN", "NT", "TT")
# cuSPARSE T much slower than its N: the matrices where transposition costs CSR most
SLOW_T = 1.5
# HiSparse T / N must stay below this on every matrix
MAX_T_OVER_N = 1.3


def _load_runs(paths):
    """(kind, run) per file: 'memory' (spk-bench --memory-only), 'add' (spk-add) or 'spmv'."""
    out = []
    for p in paths:
        with open_record(p) as f:
            run = json.load(f)
        formats = {r["format"] for r in run["results"]}
        if "--memory-only" in run.get("command", ""):
            kind = "memory"
        elif formats & {"hisparse-add", "hisparse-convert"} or "spk-add" in run.get("command", ""):
            kind = "add"
        else:
            kind = "spmv"
        out.append((p, kind, run))
    return out


def _fmt(x, digits=2):
    return f"{x:.{digits}f}" if x is not None and x == x else "-"


def _geo_line(label, xs, unit="x"):
    xs = [x for x in xs if x]
    if not xs:
        return f"- {label}: no data"
    return (f"- {label}: geometric mean {geomean(xs):.2f}{unit}, min {min(xs):.2f}{unit}, "
            f"max {max(xs):.2f}{unit} over {len(xs)} matrices")


def summarize_hisparse(paths):
    """The HiSparse acceptance figures over every given JSON file (see the module doc)."""
    runs = _load_runs(paths)
    print("### HiSparse\n")
    for p, kind, run in runs:
        print(f"- `{p.split('/')[-1]}` ({kind}): GPU {run['gpu']}; date {run['date']}; commit "
              f"{run['commit']}; copy bandwidth {run.get('copy_bandwidth_gbps') or 0:.0f} GB/s"
              + (f"; {run['cusparse']}" if run.get("cusparse") else ""))
    print()
    scalars = sorted({r["scalar"] for _, _, run in runs for r in run["results"]})
    for scalar in scalars:
        _hisparse_spmv(runs, scalar)
        _hisparse_add(runs, scalar)
        _hisparse_memory(runs, scalar)


def _hisparse_spmv(runs, scalar):
    # (matrix) -> mode -> format -> rows
    by = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    nnz = {}
    for _, kind, run in runs:
        if kind != "spmv":
            continue
        for r in run["results"]:
            if r["scalar"] == scalar and r.get("correct", True) and r["median_ms"]:
                by[r["matrix"]][r["mode"]][r["format"]].append(r)
                nnz[r["matrix"]] = r["nnz"]
    if not by:
        return
    print(f"#### SpMV, {scalar}\n")
    print("HiSparse = its default (\"auto:\") variant, best = its fastest variant; cuSPARSE = the "
          "faster of CSR ALG1/ALG2 in that mode; speed-ups are cuSPARSE time / HiSparse time. "
          f"'!' marks matrices where cuSPARSE T is more than {SLOW_T}x slower than its N.\n")
    print("| matrix | nnz | HiSparse N ms | HiSparse T ms | HiSparse T/N | best T/N | "
          "cuSPARSE N ms | cuSPARSE T ms | cuSPARSE T/N | N vs cuSPARSE | T vs cuSPARSE (best) | CSR T vs "
          "cuSPARSE T | KK T vs cuSPARSE T |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    agg = defaultdict(list)
    t_over_n = []
    slow = []

    def pick(rows, default=True):
        if not rows:
            return None
        if default:
            d = [r for r in rows if r["variant"].startswith("auto:")]
            if d:
                return d[0]
        return min(rows, key=lambda r: r["median_ms"])

    def ms(r):
        return r["median_ms"] if r else None

    def ratio(a, b):
        return a / b if a and b else None

    for matrix in sorted(by, key=lambda m: -nnz[m]):
        modes = by[matrix]
        hn = pick(modes["N"]["hisparse"])
        ht = pick(modes["T"]["hisparse"])
        hnb = pick(modes["N"]["hisparse"], False)
        htb = pick(modes["T"]["hisparse"], False)
        cn = pick([r for f in CUSPARSE_SPMV for r in modes["N"][f]], False)
        ct = pick([r for f in CUSPARSE_SPMV for r in modes["T"][f]], False)
        csr_t = pick(modes["T"]["csr"], False)
        kk_t = pick(modes["T"]["kokkoskernels"], False)
        if not (hn or ht):
            continue
        key = "large" if nnz[matrix] >= LARGE_NNZ else "small"
        c_tn = ratio(ms(ct), ms(cn))
        flag = "!" if c_tn and c_tn > SLOW_T else ""
        h_tn = ratio(ms(ht), ms(hn))
        hb_tn = ratio(ms(htb), ms(hnb))
        n_vs = ratio(ms(cn), ms(hn))
        t_vs = ratio(ms(ct), ms(ht))
        tb_vs = ratio(ms(ct), ms(htb))
        if h_tn:
            t_over_n.append((h_tn, matrix, key))
        for k in (key, "all"):
            agg[(k, "N")].append(n_vs)
            agg[(k, "T")].append(t_vs)
            agg[(k, "T best")].append(tb_vs)
            agg[(k, "N best")].append(ratio(ms(cn), ms(hnb)))
            agg[(k, "csr T")].append(ratio(ms(ct), ms(csr_t)))
            if flag:
                agg[(k, "T slow")].append(t_vs)
        if flag:
            slow.append((matrix, c_tn, t_vs, h_tn))
        print(f"| {matrix}{flag} | {nnz[matrix]} | {_fmt(ms(hn), 4)} | {_fmt(ms(ht), 4)} | "
              f"{_fmt(h_tn)} | {_fmt(hb_tn)} | {_fmt(ms(cn), 4)} | {_fmt(ms(ct), 4)} | "
              f"{_fmt(c_tn)} | {_fmt(n_vs)} | {_fmt(t_vs)} ({_fmt(tb_vs)}) | "
              f"{_fmt(ratio(ms(ct), ms(csr_t)))} | {_fmt(ratio(ms(ct), ms(kk_t)))} |")
    print()
    for k in ("large", "all"):
        print(_geo_line(f"{k} matrices, HiSparse T vs cuSPARSE T", agg[(k, "T")]))
        print(_geo_line(f"{k} matrices, HiSparse best variant T vs cuSPARSE T", agg[(k, "T best")]))
        print(_geo_line(f"{k} matrices, HiSparse N vs cuSPARSE CSR N (best alg)", agg[(k, "N")]))
        print(_geo_line(f"{k} matrices, HiSparse best variant N vs cuSPARSE N", agg[(k, "N best")]))
        print(_geo_line(f"{k} matrices, spk CSR best T vs cuSPARSE T", agg[(k, "csr T")]))
        print(_geo_line(f"{k} matrices with cuSPARSE T/N > {SLOW_T}, HiSparse T vs cuSPARSE T",
                        agg[(k, "T slow")]))
    if slow:
        print(f"- cuSPARSE T/N > {SLOW_T}: " + ", ".join(
            f"{m} (cuSPARSE T/N {c:.2f}, HiSparse T {_fmt(t)}x faster, HiSparse T/N {_fmt(h)})"
            for m, c, t, h in slow))
    if t_over_n:
        worst = max(t_over_n)
        verdict = "PASS" if worst[0] <= MAX_T_OVER_N else "FAIL"
        over = [f"{m} {x:.2f}" for x, m, _ in sorted(t_over_n, reverse=True) if x > MAX_T_OVER_N]
        print(f"- HiSparse T/N: max {worst[0]:.2f} ({worst[1]}), must be <= {MAX_T_OVER_N}: "
              f"{verdict}" + (f"; above: {', '.join(over)}" if over else ""))
    print()


def _hisparse_add(runs, scalar):
    # matrix -> op -> format -> rows
    by = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    nnz = {}
    wrong = []
    for _, kind, run in runs:
        if kind != "add":
            continue
        for r in run["results"]:
            if r["scalar"] != scalar:
                continue
            if not r.get("correct", True):
                wrong.append(f"{r['matrix']} {r['format']} {r['variant']}")
                continue
            by[r["matrix"]][r["mode"]][r["format"]].append(r)
            nnz[r["matrix"]] = r["nnz"]
    if not by:
        return
    print(f"#### Addition C = op(A) + op(B), {scalar}\n")
    print("B = A with every entry moved within +-radius. cuSPARSE = csrgeam2 with C allocated per "
          "call; \"with T\" = the fastest way a user gets op(A) + op(B) (csr2csc of the transposed "
          "operands + geam, or for TT geam + one csr2csc of the sum), \"pre\" = geam alone on "
          "operands transposed beforehand. Speed-ups: cuSPARSE time / HiSparse time.\n")
    print("| matrix | nnz A | nnz B | nnz C | convert A ms | op | HiSparse ms | cuSPARSE with T ms "
          "| vs with T | cuSPARSE pre ms | vs pre | HiSparse %copy (own) | HiSparse+ws ms "
          "| +ws vs with T |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    agg = defaultdict(list)
    for matrix in sorted(by, key=lambda m: -nnz[m]):
        ops = by[matrix]
        conv = [r for r in ops["-"]["hisparse-convert"] if r["variant"] == "A"]
        key = "large" if nnz[matrix] >= LARGE_NNZ else "small"
        for op in ADD_OPS:
            rows = ops[op]["hisparse-add"]
            if not rows:
                continue
            h = rows[0]
            ws = [r for r in rows if r["variant"].endswith("+ws")]
            user = ops[op]["cusparse-geam"] + ops[op]["cusparse-geam+transpose"]
            pre = ops[op]["cusparse-geam"] + ops[op]["cusparse-geam-pretransposed"]
            u = min((r["median_ms"] for r in user), default=None)
            pr = min((r["median_ms"] for r in pre), default=None)
            vs_u = u / h["median_ms"] if u else None
            vs_p = pr / h["median_ms"] if pr else None
            vs_ws = u / ws[0]["median_ms"] if u and ws else None
            for k in (key, "all"):
                agg[(k, op, "user")].append(vs_u)
                agg[(k, op, "pre")].append(vs_p)
                if vs_ws:
                    agg[(k, op, "ws")].append(vs_ws)
            print(f"| {matrix} | {h['nnz']} | {h.get('nnz_b', '-')} | {h.get('nnz_c', '-')} | "
                  f"{_fmt(conv[0]['median_ms'], 3) if conv else '-'} | {op} | "
                  f"{h['median_ms']:.4f} | {_fmt(u, 4)} | {_fmt(vs_u)} | {_fmt(pr, 4)} | "
                  f"{_fmt(vs_p)} | {100 * h['copy_fraction']:.0f}% "
                  f"({100 * h.get('own_copy_fraction', 0):.0f}%) | "
                  f"{_fmt(ws[0]['median_ms'], 4) if ws else '-'} | {_fmt(vs_ws)} |")
    print()
    for k in ("large", "all"):
        for op in ADD_OPS:
            if agg[(k, op, "user")]:
                print(_geo_line(f"{k} matrices, {op}: HiSparse vs cuSPARSE (with the transposes)",
                                agg[(k, op, "user")]))
                if op != "NN":
                    print(_geo_line(f"{k} matrices, {op}: HiSparse vs cuSPARSE on pretransposed "
                                    "operands", agg[(k, op, "pre")]))
                if agg[(k, op, "ws")]:
                    print(_geo_line(f"{k} matrices, {op}: HiSparse with a kept workspace vs "
                                    "cuSPARSE (with the transposes)", agg[(k, op, "ws")]))
    nn = [x for x in agg[("large", "NN", "user")] if x] or [x for x in agg[("all", "NN", "user")]
                                                            if x]
    if nn:
        g = geomean(nn)
        t = {op: geomean([x for x in agg[("large", op, "user")] if x] or
                         [x for x in agg[("all", op, "user")] if x]) for op in ADD_OPS[1:]}
        more = all(v == v and v > g for v in t.values())
        print(f"- acceptance: NN {g:.2f}x (must be >= 2: {'PASS' if g >= 2 else 'FAIL'}); "
              + ", ".join(f"{op} {v:.2f}x" for op, v in t.items())
              + f" (must exceed NN: {'PASS' if more else 'FAIL'})")
    if wrong:
        print(f"- rows that disagreed with the host reference (left out): {', '.join(wrong)}")
    print()


def _hisparse_memory(runs, scalar):
    """HiSparse bytes over CSR bytes: from --memory-only runs, else from the timed spk-bench rows
    (the default HiSparse variant against the smallest CSR row)."""
    mem = defaultdict(dict)
    nnz = {}
    for kinds in (("memory",), ("spmv",)):
        for _, kind, run in runs:
            if kind not in kinds:
                continue
            for r in run["results"]:
                if r["scalar"] != scalar or not r.get("memory_bytes"):
                    continue
                m = mem[r["matrix"]]
                if kinds == ("spmv",) and "source" in m and m["source"] == "memory":
                    continue
                m["source"] = kinds[0]
                nnz[r["matrix"]] = r["nnz"]
                if r["format"] == "csr":
                    m["csr"] = min(m.get("csr", r["memory_bytes"]), r["memory_bytes"])
                elif r["format"] == "hisparse" and (kinds == ("memory",) or
                                                    r["variant"].startswith("auto:")):
                    m["hisparse"] = r["memory_bytes"]
    rows = [(m, v) for m, v in mem.items() if "csr" in v and "hisparse" in v]
    if not rows:
        return
    print(f"#### Memory, {scalar}\n")
    print("| matrix | nnz | CSR MB | HiSparse MB | HiSparse / CSR | source |")
    print("|---|---|---|---|---|---|")
    agg = defaultdict(list)
    for m, v in sorted(rows, key=lambda x: -nnz[x[0]]):
        q = v["hisparse"] / v["csr"]
        for k in ("large" if nnz[m] >= LARGE_NNZ else "small", "all"):
            agg[k].append(q)
        print(f"| {m} | {nnz[m]} | {v['csr'] / 1e6:.1f} | {v['hisparse'] / 1e6:.1f} | {q:.3f} | "
              f"{v['source']} |")
    print()
    for k in ("large", "all"):
        if agg[k]:
            xs = agg[k]
            print(f"- {k} matrices: HiSparse / CSR mean {sum(xs) / len(xs):.3f}, geometric mean "
                  f"{geomean(xs):.3f}, min {min(xs):.3f}, max {max(xs):.3f} over {len(xs)} "
                  "matrices")
    print()


if __name__ == "__main__":
    if "--hisparse" in sys.argv:
        summarize_hisparse([a for a in sys.argv[1:] if not a.startswith("--")])
        sys.exit(0)
    if "--compound" in sys.argv:
        for p in [a for a in sys.argv[1:] if not a.startswith("--")]:
            summarize_compound(p)
        sys.exit(0)
    if "--coo" in sys.argv:
        for p in [a for a in sys.argv[1:] if not a.startswith("--")]:
            summarize_coo(p)
        sys.exit(0)
    if "--formats" in sys.argv:
        for p in [a for a in sys.argv[1:] if not a.startswith("--")]:
            summarize_formats(p, large_only="--large" in sys.argv)
        sys.exit(0)
    if len([a for a in sys.argv[1:] if a != "--large"]) < 1:
        print(__doc__)
        sys.exit(2)
    args = [a for a in sys.argv[1:] if a != "--large"]
    for p in args:
        summarize(p, large_only="--large" in sys.argv)
