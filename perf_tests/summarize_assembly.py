#!/usr/bin/env python3
"""Markdown tables of spk-assemble JSON files (docs/PERFORMANCE.md, issue 8).

usage: python3 perf_tests/summarize_assembly.py FILE.json [FILE.json ...]

One row per (mesh, element, ordering): the bandwidth of the ordering, spk's full, symbolic and
numeric-only times, the baselines, and the ratios the acceptance names: GPU sort-by-key
(the faster of thrust and spk's radix sort) / spk-full, host sort / spk-full, spk-full /
spk-numeric. Times are medians in milliseconds. "max rel. error" covers spk and the sort
baselines against spk's result; Kokkos Kernels' SpGEMM error is its own column.
"""
import json
import lzma
import sys


def main(paths):
    rows = {}
    order = []
    for path in paths:
        with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
            doc = json.load(f)
        print(f"- `{path}`: {doc['gpu']}, {doc['date']}, commit {doc['commit']}, "
              f"copy bandwidth {doc['copy_bandwidth_gbps']:.0f} GB/s")
        for r in doc["results"]:
            key = (r["matrix"], r["element"], r["ordering"])
            if key not in rows:
                rows[key] = {"nodes": r["rows"], "elements": r["elements"], "nnz": r["nnz"],
                             "bandwidth": r["bandwidth"]}
                order.append(key)
            rows[key][r["format"]] = r["median_ms"]
            rows[key]["err:" + r["format"]] = r["rel_error"]
    print()
    cols = ["spk-full", "spk-symbolic", "spk-numeric", "thrust-sort", "coo-sort", "kk-spgemm",
            "kk-spgemm-numeric", "host-sort"]
    print("| mesh | element | ordering | elements | nodes | nnz (blocks) | bandwidth | "
          + " | ".join(c + " ms" for c in cols)
          + " | GPU sort / full | host / full | full / numeric | max rel. error | KK rel. error |")
    print("|" + "---|" * (7 + len(cols) + 5))

    def fmt(v):
        if v is None:
            return "–"
        return f"{v:.1f}" if v >= 100 else (f"{v:.2f}" if v >= 1 else f"{v:.3f}")

    for key in order:
        r = rows[key]
        full = r.get("spk-full")
        sorts = [r[m] for m in ("thrust-sort", "coo-sort") if m in r]
        gpu_sort = min(sorts) if sorts else None
        ratio = lambda a, b: f"{a / b:.2f}" if a and b else "–"
        errs = [v for k, v in r.items()
                if k.startswith("err:") and not k.startswith("err:kk") and v is not None]
        kk = r.get("err:kk-spgemm")
        mesh = key[0].replace("mesh:", "").split("/")[-1]
        print(f"| {mesh} | {key[1]} | {key[2]} | {r['elements']} | {r['nodes']} | {r['nnz']} | "
              f"{r['bandwidth']} | " + " | ".join(fmt(r.get(c)) for c in cols)
              + f" | {ratio(gpu_sort, full)} | {ratio(r.get('host-sort'), full)} | "
              f"{ratio(full, r.get('spk-numeric'))} | {max(errs) if errs else 0:.1e} | "
              + (f"{kk:.1e}" if kk is not None else "–") + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1:])
