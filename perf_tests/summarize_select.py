#!/usr/bin/env python3
"""Summarises spk-bench --format all runs (with format "auto") against the issue-9 targets.

Usage: python3 perf_tests/summarize_select.py RUN.json [RUN.json ...] [--large N]

Per matrix: the fastest measured spk row (any spk format and schedule, "auto" rows excluded),
the feature-only choice (auto features:NAME) and the trial choice (auto trial:NAME) with their
times, their ratio to that best, the time to choose (also in products of the chosen format),
the wrapper's overhead (features:NAME against concrete:NAME) and cuSPARSE CSR ALG1. Then the
targets: share of matrices within 10% of the best, geometric mean and minimum against cuSPARSE
(minimum over the large matrices: the first --large N matrices of each file that have >= 20M
nonzeros), and the feature-only selection cost in products.
"""
import json
import lzma
import math
import sys

SPK = {"csr", "ell", "hll", "dia", "hdia", "hyb", "balanced-coo", "compressed-coo", "hisparse"}


def sweep_name(r):
    """The select_format candidate a sweep row of spk-bench measures (its configuration with the
    same launch parameters), or None."""
    f, v = r["format"], r["variant"]
    if f == "csr":
        if v.startswith("auto:"):
            return "csr"
        for vl, t in (("32", "8"), ("16", "16"), ("8", "32")):
            if v.startswith("vector-v%s-t%s-r1-static" % (vl, t)):
                return "csr-v" + vl
        if v.startswith("balanced-c2048-t256"):
            return "csr-balanced"
        if v.startswith("warp-k8-t2"):
            return "csr-warp"
        return None
    if f == "ell":
        return "ell" if v.startswith("auto:") else ("ell-t8" if v.startswith("tpr8-") else None)
    if f == "hll":
        if v.startswith("auto:h32-tpr"):
            return "hll"
        if v.startswith("auto:h32-global"):
            return "hll-global"
        return "hll-t4" if v.startswith("h32-tpr4") else None
    if f == "compressed-coo":
        return f if v.startswith("auto:s") else None
    if f in ("dia", "hdia", "hyb", "balanced-coo", "hisparse"):
        return f if v.startswith("auto:") else None
    return None


def geomean(v):
    v = [x for x in v if x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def main(argv):
    files = [a for a in argv if a.endswith(".json")]
    rows = []
    for f in files:
        d = json.load(lzma.open(f, "rt") if f.endswith(".xz") else open(f))
        mats = {}
        order = []
        for r in d["results"]:
            m = r["matrix"]
            if m not in mats:
                mats[m] = []
                order.append(m)
            mats[m].append(r)
        for m in order:
            rs = mats[m]
            ok = [r for r in rs if r.get("correct", True)]
            spk = [r for r in ok if r["format"] in SPK]
            if not spk:
                continue
            best = min(spk, key=lambda r: r["median_ms"])
            get = lambda prefix: next((r for r in ok if r["format"] == "auto" and
                                       r["variant"].startswith(prefix)), None)
            feat, trial, conc = get("features:"), get("trial:"), get("concrete:")
            cus = next((r for r in ok if r["format"] == "cusparse-csr-alg1"), None)
            csr_default = next((r for r in ok if r["format"] == "csr" and
                                r["variant"].startswith("auto:")), None)
            sweep = {}
            for r in spk:
                k = sweep_name(r)
                if k and (k not in sweep or r["median_ms"] < sweep[k]):
                    sweep[k] = r["median_ms"]
            rows.append(dict(matrix=m, nnz=rs[0]["nnz"], best=best, feat=feat, trial=trial,
                             conc=conc, cus=cus, csr=csr_default, sweep=sweep))
    print("| matrix | nnz | best spk (format variant) | best ms | features choice | ms | / best | "
          "chosen in ms (products) | trial choice | ms | / best | chosen in ms | wrapper / "
          "concrete | cuSPARSE CSR ms | cuSPARSE / features | cuSPARSE / trial |")
    print("|" + "---|" * 16)
    for r in rows:
        b, f, t, c, cu = r["best"], r["feat"], r["trial"], r["conc"], r["cus"]
        fn = f["variant"].split(":", 1)[1] if f else "-"
        tn = t["variant"].split(":", 1)[1] if t else "-"
        print("| %s | %d | %s %s | %.4f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["matrix"], r["nnz"], b["format"], b["variant"], b["median_ms"], fn,
            "%.4f" % f["median_ms"] if f else "-",
            "%.3f" % (f["median_ms"] / b["median_ms"]) if f else "-",
            "%.3f (%.1f)" % (f["select_ms"], f["select_ms"] / f["median_ms"]) if f else "-",
            tn, "%.4f" % t["median_ms"] if t else "-",
            "%.3f" % (t["median_ms"] / b["median_ms"]) if t else "-",
            "%.1f" % t["select_ms"] if t else "-",
            "%.3f" % (f["median_ms"] / c["median_ms"]) if f and c else "-",
            "%.4f" % cu["median_ms"] if cu else "-",
            "%.2f" % (cu["median_ms"] / f["median_ms"]) if cu and f else "-",
            "%.2f" % (cu["median_ms"] / t["median_ms"]) if cu and t else "-"))
    print()
    for key, label in (("feat", "features only"), ("trial", "trial")):
        have = [r for r in rows if r[key]]
        if not have:
            continue
        within = sum(1 for r in have if r[key]["median_ms"] <= 1.10 * r["best"]["median_ms"])
        # the chosen configuration as the sweep measured it (same conditions as the best)
        def swept(r):
            name = r[key]["variant"].split(":", 1)[1]
            return r["sweep"].get(name, r[key]["median_ms"])
        within_sweep = sum(1 for r in have if swept(r) <= 1.10 * r["best"]["median_ms"])
        misses = [(r["matrix"], r[key]["variant"].split(":", 1)[1], swept(r) / r["best"]["median_ms"])
                  for r in have if swept(r) > 1.10 * r["best"]["median_ms"]]
        vs_cus = [r["cus"]["median_ms"] / r[key]["median_ms"] for r in have if r["cus"]]
        large = [r for r in have if r["nnz"] >= 20_000_000 and r["cus"]]
        worst_large = min(((r["cus"]["median_ms"] / r[key]["median_ms"], r["matrix"])
                           for r in large), default=(float("nan"), "-"))
        print("%s: the chosen configuration's sweep time within 10%% of the best on %d of %d "
              "(%.0f%%); misses: %s" % (label, within_sweep, len(have),
                                       100.0 * within_sweep / len(have),
                                       ", ".join("%s %s %.2f" % m for m in misses)))
        print("%s: within 10%% of the best spk format on %d of %d matrices (%.0f%%); "
              "cuSPARSE CSR / auto geometric mean %.3f over %d; large matrices: geometric mean "
              "%.3f, minimum %.3f (%s)" % (
                  label, within, len(have), 100.0 * within / len(have), geomean(vs_cus),
                  len(vs_cus), geomean([r["cus"]["median_ms"] / r[key]["median_ms"]
                                        for r in large]), worst_large[0], worst_large[1]))
        if key == "feat":
            cost = [r["feat"]["select_ms"] / r["feat"]["median_ms"] for r in have]
            over = [(c, r["matrix"]) for c, r in zip(cost, have) if c >= 5]
            print("features only: time to choose in products of the chosen format: median %.2f, "
                  "max %.2f; %d matrices at >= 5 products%s" % (
                      sorted(cost)[len(cost) // 2], max(cost), len(over),
                      (": " + ", ".join("%s %.1f" % (m, c) for c, m in over[:8])) if over else ""))
            ovh = [r["feat"]["median_ms"] / r["conc"]["median_ms"] for r in have if r["conc"]]
            print("wrapper overhead (features:NAME / concrete:NAME): geometric mean %.4f, range "
                  "%.3f-%.3f" % (geomean(ovh), min(ovh), max(ovh)))
    best_vs_cus = [r["cus"]["median_ms"] / r["best"]["median_ms"] for r in rows if r["cus"]]
    print("best measured spk format: cuSPARSE CSR / best geometric mean %.3f" % geomean(best_vs_cus))


if __name__ == "__main__":
    main(sys.argv[1:])
