# Runs pacheck's property catalogue on FlashInfer's paged-attention wrappers and writes what held and what failed.
"""python3 check_flashinfer.py [--cases N] [--json OUT.json] [--failures DIR] [--only NAME...]

Each failure prints pacheck's shrunk case, its worst element and the replay line, and is saved as a case file."""
import argparse
import json
import sys
import time

import pacheck

from flashinfer_kernels import kernels


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", default="flashinfer_check.json")
    parser.add_argument("--failures", default="pacheck-failures/flashinfer")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--properties", nargs="*", default=None)
    parser.add_argument("--head-dims", nargs="*", type=int, default=None)
    o = parser.parse_args()
    import flashinfer
    results = {"flashinfer": flashinfer.__version__, "cases_per_property": o.cases, "kernels": []}
    for name, kernel, capabilities, model in kernels(o.head_dims):
        if o.only and name not in o.only:
            continue
        entry = {"name": name, "capabilities": capabilities, "error_model": model, "properties": []}
        properties = o.properties or pacheck.applicable_properties(capabilities)
        for prop in properties:
            start = time.time()
            try:
                held = pacheck.check(kernel, name=name, capabilities=capabilities, error_model=model,
                                     properties=[prop], cases=o.cases, seed=o.seed, failure_dir=o.failures)
                row = {"property": prop, "status": "pass", "cases": held[0].cases}
            except pacheck.PropertyFailure as f:
                row = {"property": prop, "status": "fail", "cases": f.cases, "case_file": f.case_file,
                       "replay": f.replay, "message": f.message[-3000:]}
                if f.worst:
                    row["worst"] = {"exact": f.worst.exact, "got": f.worst.got, "error": f.worst.error,
                                    "bound": f.worst.bound, "position": f.worst.position}
                print(f"FAIL {name} {prop}\n{f}\n", flush=True)
            row["seconds"] = round(time.time() - start, 1)
            print(f"{name:28s} {prop:26s} {row['status']:5s} {row['cases']:5d} cases {row['seconds']:7.1f} s",
                  flush=True)
            entry["properties"].append(row)
        results["kernels"].append(entry)
    with open(o.json, "w") as f:
        json.dump(results, f, indent=1)
    return 0 if all(r["status"] == "pass" for k in results["kernels"] for r in k["properties"]) else 1


if __name__ == "__main__":
    sys.exit(main())
