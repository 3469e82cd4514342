#!/usr/bin/env python3
"""Reads the logs of run_gpu_suite.sh and writes them as one results.json.

  python3 collect_results.py --logs OUT/logs --output OUT/results.json

The logs folder (run_gpu_suite.sh writes it): environment.txt (KEY=value lines; "absent: why" for a missing tool),
catalogue/SUITE__KERNEL.log (+ .summary.json, the worst error per dtype), sanitizer/KERNEL__TOOL__SUITE.log (the
catalogue suite whose draw it ran), mutants/SEED.log (+ SEED.json, `pacheck mutants --gpu --json`), sass/BINARY.log,
bench/FLUSH/SOURCE.{log,json} (SOURCE: see SOURCES; a source with neither file is skipped, not run),
options/OPTION__GQA.{log,json} (paged_attention_bench with a logit option, or none, or a context of the window's
length: window_reference). A log is "command: ..." then the output then "exit N", or one line "skipped: why"; a
folder holding skipped.log was skipped whole, one holding error.log could not start its runs.

results.json (schema 2):
  {"schema": 2, "gpus": [GPU, ...]}: one entry per GPU, its latest run (results_page.py --add replaces it).
  GPU: {"environment": {"gpu", "driver", "cuda_driver", "cuda_runtime", "compute_sanitizer", "cuobjdump",
                        "python", "torch", "flashinfer", "commit", "date", "command",
                        "absent": {TOOL: why}},   (a tool absent has no version key, its reason here)
        "correctness": {"cases_per_property", "sanitizer_cases",
                        "catalogue": {"runs": [{"suite", "kernel", "status", "exit", "tests_run", "passed",
                                                "skipped", "failed": [test],
                                                "worst": {VARIANT: {DTYPE: worst error / bound}}}]},
                        "sanitizers": {"runs": [{"kernel", "tool", "suite", "status", "exit", "errors"}]},
                        "gpu_mutants": {"runs": [{"seed", "status", "exit", "cases_per_property",
                                                  "sanitizers_skipped"?: why}],   (pass: every mutant died)
                                        "mutants": {MUTANT: {"description", "cases_to_first_kill": {SEED: n or
                                                    null (survived)}, "killed_by": {PROPERTY: [SEED]},
                                                    "sanitizers"?: {SEED: [tool that killed it]}}}}},
        "sass_check": {"runs": [{"binary", "status", "exit", "kernels_checked", "kernels_unwritten"}]},
        "benchmark": {"flushes": [{"flush": "dirty"|"clean", "copy_tbps", "repeats",
                                   "sources": {SOURCE: {"status": "ok"|"skipped"|"failed", "reason"?, versions...}},
                                   "kernels": [NAME],
                                   "rows": [{"gqa", "batch", "context", "bytes",
                                             "times": [per NAME: [us, tbps] or [us, tbps, split_size], {"error"},
                                                       or null (not timed on this shape)]}]}]},
        "logit_options": {"rows": [{"option", "gqa", "batch", "context", "against",
                                    "kernels": {NAME: {"us", "reference_us", "cost"}} or "error"}]}}
  A section of runs may instead be {"skipped": why} or {"error": what} (benchmark, logit_options: {"skipped": why}).
  status is pass, fail, timeout or skipped (then "reason"); a pass implies exit 0, no failed test and no sanitizer
  error, so those keys are left out. A run that failed or timed out also keeps "command" and "tail" (its last
  lines), and "unreadable" where the JSON it was writing was cut off with it. Kernel names: our variants as
  paged_attention_bench names them (cuda_fused, cuda_splitk, ...; + _fp16 for --dtype fp16, + _fp8_e4m3 or _fp8_e5m2
  on an fp8 cache), torch_cudnn, torch_flash, flashinfer_cuda_cores, flashinfer_tensor_cores (+ the fp8 suffixes).
  Other sections go beside these in a GPU entry (external_kernels: external_results.py); results_page.py lists those
  it does not render by name. In bench/results.json, "earlier": {SECTION: {"commit", "date", "command"}} names the
  run a section was kept from when a later run of another commit skipped it (results_page.py --add).
"""
import argparse
import json
import re
import sys
from pathlib import Path

SCHEMA = 2
ABOUT = "GPU runs of bench/run_gpu_suite.sh, the latest per GPU; schema in bench/collect_results.py"
TIMEOUT_EXITS = (124, 137)
TAIL_LINES = 8
PASS_IMPLIES = ("exit", "failed", "errors")  # exit 0, [], 0 in a run that passed: not recorded


class LogError(Exception):
    """Input that cannot be read as the suite's logs; the message names the file and what is wrong."""


def read_log(path):
    """{"command", "lines", "exit" (None when the run was cut off), "skipped" (the reason, or None)}."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as error:
        raise LogError(f"cannot read {path}: {error.strerror}") from error
    log = {"command": None, "lines": lines, "exit": None, "skipped": None}
    if lines and lines[0].startswith("skipped: "):
        log["skipped"] = lines[0][len("skipped: "):]
        return log
    if lines and lines[0].startswith("command: "):
        log["command"] = lines[0][len("command: "):]
        lines = lines[1:]
    if lines and re.fullmatch(r"exit \d+", lines[-1]):
        log["exit"] = int(lines[-1].split()[1])
        lines = lines[:-1]
    log["lines"] = lines
    return log


def tail(lines):
    return [line for line in lines if line.strip()][-TAIL_LINES:]


def outcome(run, log, passed):
    """Sets run's status from the log's exit status and passed (the run's own evidence of a pass); a run that did
    not pass keeps its command and last lines, one that did drops what a pass implies."""
    if log["exit"] in TIMEOUT_EXITS:
        run["status"] = "timeout"
    else:
        run["status"] = "pass" if log["exit"] == 0 and passed else "fail"
    if run["status"] == "pass":
        for key in PASS_IMPLIES:
            run.pop(key, None)
    else:
        run["command"] = log["command"]
        run["tail"] = tail(log["lines"]) + ([] if log["exit"] is not None else ["(no exit status: cut off)"])


def read_json(path):
    try:
        return json.loads(path.read_text())
    except OSError as error:
        raise LogError(f"cannot read {path}: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise LogError(f"{path} is not valid JSON: {error}") from error


def read_run_json(run, log, path, empty):
    """The JSON a run wrote beside its log (empty when none). One cut off with its run (timed out, or no exit status)
    reads as empty, and run["unreadable"] says why; a run that ended by itself and left bad JSON is an error."""
    if not path.exists():
        return empty
    try:
        return read_json(path)
    except LogError as error:
        if log["exit"] is not None and log["exit"] not in TIMEOUT_EXITS:
            raise
        run["unreadable"] = f"{path.name}: cut off with its run ({error.__cause__ or error})"
        return empty


def runs_in(folder, fields, read_run):
    """{"runs": [...]}, a run per log in folder, named FIELD__FIELD....log; {"skipped": why} when the folder holds
    skipped.log; {"error": what} when it holds error.log (the step could not start its runs)."""
    if not folder.is_dir():
        return {"skipped": f"no {folder.name} logs"}
    for name, key in (("skipped.log", "skipped"), ("error.log", "error")):
        if (folder / name).exists():
            text = (folder / name).read_text(errors="replace").strip()
            return {key: text[len("skipped: "):] if text.startswith("skipped: ") else text}
    runs = []
    for path in sorted(folder.glob("*.log"), key=lambda p: p.stem.split("__")):
        parts = path.stem.split("__")
        if len(parts) != len(fields):
            raise LogError(f"{path}: a log here is named {'__'.join(f.upper() for f in fields)}.log")
        run, log = dict(zip(fields, parts)), read_log(path)
        if log["skipped"]:
            run.update(status="skipped", reason=log["skipped"])
        else:
            read_run(run, log, path)
        runs.append(run)
    return {"runs": runs}


def worst_by_variant(worst):
    """{variant: {dtype: worst error / bound}} of a catalogue summary's entries: what the page shows."""
    table = {}
    for entry in worst:
        if "worst_error_over_bound" in entry:
            table.setdefault(entry.get("variant"), {})[entry.get("dtype")] = entry["worst_error_over_bound"]
    return table


def catalogue_run(run, log, path):
    text = "\n".join(log["lines"])

    def count(pattern):
        m = re.search(pattern, text, re.MULTILINE)
        return int(m.group(1)) if m else 0
    run["exit"] = log["exit"]
    run["tests_run"] = count(r"^\[==========\] (\d+) tests? from .* ran\.")
    run["passed"] = count(r"^\[  PASSED  \] (\d+) tests?\.")
    run["skipped"] = count(r"^\[  SKIPPED \] (\d+) tests?, listed below")
    run["failed"] = sorted(set(re.findall(r"^\[  FAILED  \] ([A-Za-z_][\w/.]*)", text, re.MULTILINE)))
    summary = path.with_suffix(".summary.json")
    worst = read_run_json(run, log, summary, [])
    if not isinstance(worst, list):
        raise LogError(f"{summary}: expected a list of worst errors per variant and dtype")
    run["worst"] = worst_by_variant(worst)
    if log["exit"] == 0 and run["tests_run"] and not run["passed"] and run["skipped"]:
        reason = re.search(r": Skipped\n(.+)", text)
        run.update(status="skipped", reason=reason.group(1).strip() if reason else "every test skipped")
        return
    outcome(run, log, run["tests_run"] > 0 and not run["failed"])
    if run["status"] == "fail" and not run["tests_run"]:
        run["tail"].append("(no test ran: does the filter still match the suite's tests?)")


def sanitizer_run(run, log, path):
    text = "\n".join(log["lines"])
    found = [int(n) for n in re.findall(r"ERROR SUMMARY: (\d+) errors?", text)]
    found += [int(n) for n in re.findall(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?", text)]
    run.update(exit=log["exit"], errors=sum(found) if found else None)
    outcome(run, log, bool(found) and sum(found) == 0)


def add_mutants(table, seed, entries, descriptions, killers):
    """Adds a seed's kill matrix entries ({"mutant", "killed_by", "cases_to_first_kill"}) and killers ({mutant:
    [sanitizer tool that killed it]}) to table, gpu_mutants' "mutants"."""
    for entry in entries:
        name = entry["mutant"]
        row = table.setdefault(name, {"description": descriptions.get(name, ""), "cases_to_first_kill": {},
                                      "killed_by": {}})
        row["cases_to_first_kill"][seed] = entry["cases_to_first_kill"]
        for prop in entry["killed_by"]:
            row["killed_by"].setdefault(prop, []).append(seed)
        if name in killers:
            row.setdefault("sanitizers", {})[seed] = killers[name]


def mutants_run(table, run, log, path):
    matrix = read_run_json(run, log, path.with_suffix(".json"), {})
    run["exit"] = log["exit"]
    run["cases_per_property"] = matrix.get("cases_per_property")
    sanitizers = matrix.get("sanitizers", {})
    if "skipped" in sanitizers:
        run["sanitizers_skipped"] = sanitizers["skipped"]
    killers = {m: [r["tool"] for r in runs if r.get("killed")] for m, runs in sanitizers.get("runs", {}).items()}
    entries = matrix.get("per_mutant", [])
    add_mutants(table, run["seed"], entries, matrix.get("descriptions", {}), killers)
    outcome(run, log, bool(entries) and all(e["cases_to_first_kill"] for e in entries))


def gpu_mutants(folder):
    table = {}
    section = runs_in(folder, ("seed",), lambda run, log, path: mutants_run(table, run, log, path))
    return dict(section, mutants=table) if "runs" in section else section


def sass_run(run, log, path):
    run["exit"] = log["exit"]
    if log["exit"] == 77:  # sass_descriptor_check.py: cuobjdump not found
        found = [line for line in log["lines"] if line.startswith("cuobjdump not found")]
        run.update(status="skipped", reason=found[0] if found else "cuobjdump not found")
        return
    summary = None
    for line in log["lines"]:
        summary = re.search(r"(\d+) kernels with LDGSTS copies in .*, (\d+) reading an unwritten descriptor", line) \
            or summary
    if summary:
        run["kernels_checked"], run["kernels_unwritten"] = int(summary.group(1)), int(summary.group(2))
    outcome(run, log, summary is not None and run["kernels_unwritten"] == 0)


def environment(logs):
    path = logs / "environment.txt"
    if not path.exists():
        raise LogError(f"{path} is missing: is {logs} the logs folder of run_gpu_suite.sh?")
    env = {"absent": {}}
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key:
            raise LogError(f"{path}:{number}: expected KEY=value, not '{line}'")
        if value.startswith("absent: "):
            env["absent"][key] = value[len("absent: "):]
        else:
            env[key] = value
    if not env["absent"]:
        del env["absent"]
    return env


# The benchmark scripts' JSON (ours_fp16: paged_attention_bench --dtype fp16; *_fp8_*: --kv-cache fp8_*): the field
# of their results that names the kernel, and the name it gets here.
SOURCES = {"ours": ("variant", "{}"), "ours_fp16": ("variant", "{}_fp16"), "ours_fp8_e4m3": ("variant", "{}_fp8_e4m3"),
           "ours_fp8_e5m2": ("variant", "{}_fp8_e5m2"), "torch": ("backend", "torch_{}"),
           "flashinfer": ("backend", "{}"), "flashinfer_fp8_e4m3": ("backend", "{}_fp8_e4m3"),
           "flashinfer_fp8_e5m2": ("backend", "{}_fp8_e5m2")}


def source(folder, name):
    """(the source's summary, its JSON or None): status ok, skipped (the script says why) or failed."""
    log_path, json_path = folder / f"{name}.log", folder / f"{name}.json"
    if not log_path.exists() and not json_path.exists():
        return {"status": "skipped", "reason": "not run"}, None
    log = read_log(log_path) if log_path.exists() else None
    try:
        document = read_json(json_path) if json_path.exists() else None
    except LogError as error:
        return {"status": "failed", "reason": str(error)}, None
    if document is not None and not isinstance(document, dict):
        return {"status": "failed", "reason": f"{json_path}: expected a JSON object"}, None
    if document and "skipped" in document:
        return {"status": "skipped", "reason": document["skipped"]}, None
    if log and log["skipped"]:
        return {"status": "skipped", "reason": log["skipped"]}, None
    if document is None or (log and log["exit"] != 0):
        last = tail(log["lines"])[-1:] if log else []
        where = f"exit {log['exit']}" if log and log["exit"] is not None else "no exit status"
        return {"status": "failed", "reason": f"{name} ({where}): " + (last[0] if last else "no output")}, None
    if not isinstance(document.get("results"), list):
        return {"status": "failed", "reason": f"{json_path}: no results list"}, None
    facts = {k: document[k] for k in ("device", "torch", "cudnn", "flashinfer", "cuda_runtime", "repeats")
             if k in document}
    return {"status": "ok", **facts}, document


def timing(us, tbps, split_size=None):
    """A benchmark row's entry for a timed kernel: [us, tbps], or [us, tbps, split_size]."""
    return [us, tbps] + ([split_size] if split_size is not None else [])


def kernel_entry(result, path):
    if "error" in result:
        return {"error": result["error"]}
    try:
        return timing(round(float(result["ms"]) * 1000, 3), round(float(result["tbps"]), 4), result.get("split_size"))
    except (KeyError, TypeError, ValueError) as error:
        raise LogError(f"{path}: a result without a numeric ms and tbps: {result}") from error


def tabulate(flush, rows):
    """Sets flush's "kernels" (every name in rows) and "rows", each row's {NAME: entry} "kernels" made "times" in
    that order."""
    flush["kernels"] = list(dict.fromkeys(name for row in rows for name in row["kernels"]))
    flush["rows"] = [{**{k: v for k, v in row.items() if k != "kernels"},
                      "times": [row["kernels"].get(name) for name in flush["kernels"]]} for row in rows]
    return flush


def flush_results(folder):
    flush = {"flush": folder.name, "sources": {}}
    rows = {}
    for name, (key, kernel_name) in SOURCES.items():
        summary, document = source(folder, name)
        flush["sources"][name] = summary
        if document is None:
            continue
        if name == "ours":
            flush.update({k: document[k] for k in ("copy_tbps", "repeats") if k in document})
        for result in document["results"]:
            try:
                shape = (int(result["gqa"]), int(result["batch"]), int(result["context"]))
                kernel = kernel_name.format(result[key])
            except (KeyError, TypeError, ValueError) as error:
                raise LogError(f"{folder / name}.json: a result without gqa, batch, context and {key}: "
                               f"{result}") from error
            row = rows.setdefault(shape, {"gqa": shape[0], "batch": shape[1], "context": shape[2],
                                          "bytes": None, "kernels": {}})
            if row["bytes"] is None and "fp8" not in name:  # a row's bytes are bf16 K/V's; an fp8 kernel has its tbps
                row["bytes"] = result.get("bytes")
            row["kernels"][kernel] = kernel_entry(result, f"{folder / name}.json")
    return tabulate(flush, [rows[shape] for shape in sorted(rows)])


def benchmark(logs):
    folder = logs / "bench"
    order = {"dirty": 0, "clean": 1}
    flushes = sorted((d for d in folder.glob("*") if d.is_dir()), key=lambda d: (order.get(d.name, 2), d.name)) \
        if folder.is_dir() else []
    if not flushes:
        return {"skipped": "no benchmark logs"}
    return {"flushes": [flush_results(d) for d in flushes]}


# Step 4b's runs: each option and the run it is measured against.
OPTION_REFERENCES = {"soft_cap": "none", "alibi": "none", "sinks": "none", "window": "window_reference"}


def option_times(path):
    """{kernel: us} of one options run's JSON (ours: cuda_fused, cuda_splitk), and its shape."""
    document = read_json(path)
    if not isinstance(document, dict) or not isinstance(document.get("results"), list) or not document["results"]:
        raise LogError(f"{path}: no results list")
    times, shape = {}, None
    for result in document["results"]:
        try:
            times[str(result["variant"])] = round(float(result["ms"]) * 1000, 3)
            shape = (int(result["gqa"]), int(result["batch"]), int(result["context"]))
        except (KeyError, TypeError, ValueError) as error:
            raise LogError(f"{path}: a result without variant, ms, gqa, batch and context: {result}") from error
    return times, shape


def logit_options(logs):
    """Step 4b: per option and GQA ratio, each kernel's time with the option, without, and the cost (with / without
    - 1); a run that failed says so in place of its figures."""
    folder = logs / "options"
    if not folder.is_dir():
        return {"skipped": "no logit-option runs"}
    rows = []
    for option, reference in OPTION_REFERENCES.items():
        for path in sorted(folder.glob(f"{option}__*.json")):
            gqa = path.stem.split("__")[1]
            row = {"option": option, "gqa": int(gqa) if gqa.isdigit() else gqa, "against": reference}
            try:
                times, shape = option_times(path)
                reference_times, _ = option_times(folder / f"{reference}__{gqa}.json")
            except (LogError, OSError) as error:
                row["error"] = str(error)
                rows.append(row)
                continue
            row["batch"], row["context"] = shape[1], shape[2]
            row["kernels"] = {kernel: {"us": us, "reference_us": reference_times[kernel],
                                       "cost": round(us / reference_times[kernel] - 1, 4)}
                              for kernel, us in times.items() if reference_times.get(kernel)}
            rows.append(row)
    return {"rows": rows} if rows else {"skipped": "no logit-option runs"}


def collect(logs):
    """The results.json document for the run whose logs folder is logs."""
    logs = Path(logs)
    if not logs.is_dir():
        raise LogError(f"{logs} is not a folder")
    env = environment(logs)
    correctness = {}
    for key, setting in (("cases_per_property", "cases"), ("sanitizer_cases", "sanitizer_cases")):
        if setting in env:
            value = env.pop(setting)
            correctness[key] = int(value) if value.isdigit() else value
    correctness["catalogue"] = runs_in(logs / "catalogue", ("suite", "kernel"), catalogue_run)
    correctness["sanitizers"] = runs_in(logs / "sanitizer", ("kernel", "tool", "suite"), sanitizer_run)
    if (logs / "mutants").is_dir():
        correctness["gpu_mutants"] = gpu_mutants(logs / "mutants")
    bench = benchmark(logs)
    ours = [f["sources"]["ours"] for f in bench.get("flushes", []) if f["sources"]["ours"]["status"] == "ok"]
    if ours and "cuda_runtime" in ours[0]:
        env["cuda_runtime"] = ours[0]["cuda_runtime"]
    if env.get("gpu") is None:
        env["gpu"] = ours[0].get("device", "unknown GPU") if ours else "unknown GPU"
    gpu = {"environment": env, "correctness": correctness,
           "sass_check": runs_in(logs / "sass", ("binary",), sass_run), "benchmark": bench,
           "logit_options": logit_options(logs)}
    return {"schema": SCHEMA, "about": ABOUT, "gpus": [gpu]}


def summary_lines(document):
    """A few lines saying what the run found, for the end of the suite's output."""
    lines = []
    for gpu in document["gpus"]:
        sections = [("catalogue", gpu["correctness"]["catalogue"]), ("sanitizers", gpu["correctness"]["sanitizers"]),
                    ("SASS check", gpu["sass_check"])]
        for label, section in sections:
            if "skipped" in section or "error" in section:
                lines.append(f"{label}: " + (f"skipped ({section['skipped']})" if "skipped" in section
                                             else f"failed ({section['error']})"))
                continue
            statuses = [run["status"] for run in section["runs"]]
            lines.append(f"{label}: {statuses.count('pass')} of {len(statuses)} passed"
                         + "".join(f", {statuses.count(s)} {s}" for s in ("fail", "timeout", "skipped")
                                   if s in statuses))
        for flush in gpu["benchmark"].get("flushes", []):
            sources = ", ".join(f"{name} {s['status']}" for name, s in flush["sources"].items())
            lines.append(f"benchmark, {flush['flush']} flush: {len(flush['rows'])} shapes ({sources})")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--logs", required=True, help="the logs folder run_gpu_suite.sh wrote")
    parser.add_argument("--output", required=True, help="results.json to write")
    args = parser.parse_args(argv)
    try:
        document = collect(args.logs)
    except LogError as error:
        print(f"collect_results: {error}", file=sys.stderr)
        return 2
    with open(args.output, "w") as out:
        json.dump(document, out, indent=2)
        out.write("\n")
    print("\n".join(summary_lines(document)))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
