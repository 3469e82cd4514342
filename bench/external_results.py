# Records kernels checked through pacheck's doors on a GPU (FlashInfer, Triton, plugins) in results.json's
# external_kernels section of one GPU, from the outputs those checks leave.
"""python3 external_results.py --gpu NAME --door DOOR --command CMD (--check-json FILE | --pytest-log FILE |
                               --pacheck-log FILE) [--commit C --date D] [--results bench/results.json]

--check-json   the JSON of examples/flashinfer/check_flashinfer.py (kernels, their properties and statuses)
--pytest-log   a pytest run of pacheck.pytest.property_tests: test_NAME[Property] lines, PASSED or FAILED (with -q,
               --properties names what ran)
--pacheck-log  `pacheck check` output: "  Property  variant  N cases  pass|FAIL" lines
--commit, --date  the commit checked and when (UTC): an entry checked apart from the GPU's suite run says its own

The entry replaces an earlier one with the same command, and takes its kernels out of the others (an entry left
with none goes). Then run results_page.py to regenerate the page."""
import argparse
import json
import re
import sys
from pathlib import Path

import results_page

HERE = Path(__file__).resolve().parent


def kernel_entries(checks, cases):
    """[{"name", "held": [property], "failed"?: [property], "cases"?: {property: its cases where not `cases`}}] of
    (kernel, property, status, cases) checks, in order."""
    kernels = {}
    for name, prop, status, count in checks:
        kernel = kernels.setdefault(name, {"name": name, "held": []})
        kernel.setdefault("held" if status == "pass" else "failed", []).append(prop)
        if count != cases:
            kernel.setdefault("cases", {})[prop] = count
    return list(kernels.values())


def from_check_json(path):
    document = json.loads(Path(path).read_text())
    return [(k["name"], p["property"], p["status"], p["cases"]) for k in document["kernels"]
            for p in k["properties"]], document["cases_per_property"]


def from_pytest_log(path, cases, properties):
    """pytest -q lists only failures: the properties the suite ran (`properties`) that did not fail held."""
    kernels = {}
    for line in Path(path).read_text().splitlines():
        m = re.match(r"(?:FAILED |PASSED )?\S*::test_(\w+)\[(\w+)\]( PASSED| FAILED)?", line)
        if not m:
            continue
        failed = line.startswith("FAILED") or (m.group(3) or "").strip() == "FAILED"
        entry = kernels.setdefault(m.group(1), {})
        entry[m.group(2)] = "fail" if failed or entry.get(m.group(2)) == "fail" else "pass"
    for entry in kernels.values():
        for prop in properties:
            entry.setdefault(prop, "pass")
    return [(name, p, s, cases) for name, props in kernels.items() for p, s in props.items()], cases


def from_pacheck_log(path):
    checks = []
    for line in Path(path).read_text().splitlines():
        m = re.match(r"\s+(\w+)\s+(\S+)\s+(\d+) cases\s+(pass|FAIL|GAVE UP)$", line)
        if m:
            checks.append((m.group(2), m.group(1), "pass" if m.group(4) == "pass" else "fail", int(m.group(3))))
    return checks, max((c[3] for c in checks), default=0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=str(HERE / "results.json"))
    parser.add_argument("--gpu", required=True)
    parser.add_argument("--door", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--cases", type=int, default=0, help="cases per property (pytest logs do not say)")
    parser.add_argument("--commit", default="")
    parser.add_argument("--date", default="")
    parser.add_argument("--properties", default="", help="with --pytest-log: the properties the suite ran, "
                        "comma-separated (pytest -q names only the failures)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--check-json")
    source.add_argument("--pytest-log")
    source.add_argument("--pacheck-log")
    o = parser.parse_args(argv)
    if o.check_json:
        checks, cases = from_check_json(o.check_json)
    elif o.pytest_log:
        checks, cases = from_pytest_log(o.pytest_log, o.cases, [p for p in o.properties.split(",") if p])
    else:
        checks, cases = from_pacheck_log(o.pacheck_log)
    kernels = kernel_entries(checks, cases)
    if not kernels:
        parser.error("no kernel results found in the given output")
    try:
        results = results_page.load(o.results)
    except results_page.ResultsError as error:
        parser.error(str(error))
    gpus = [g for g in results["gpus"] if g["environment"]["gpu"] == o.gpu]
    if not gpus:
        parser.error(f"no GPU named {o.gpu!r} in {o.results}")
    # A kernel's newest check supersedes its older ones: the page gives current figures only.
    checked = {kernel["name"] for kernel in kernels}
    section = []
    for run in gpus[0].get("external_kernels", []):
        run["kernels"] = [kernel for kernel in run["kernels"] if kernel["name"] not in checked]
        if run["command"] != o.command and run["kernels"]:
            section.append(run)
    entry = {"door": o.door, "command": o.command, "cases_per_property": cases}
    entry.update({key: value for key, value in (("commit", o.commit), ("date", o.date)) if value})
    entry["kernels"] = kernels
    section.append(entry)
    gpus[0]["external_kernels"] = section
    Path(o.results).write_text(results_page.dumps(results) + "\n")
    print(f"recorded {len(kernels)} kernels in {o.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
