#!/usr/bin/env python3
"""Writes bench/RESULTS.md, the GPU results page, from bench/results.json (the latest run on each GPU).

  python3 results_page.py                      regenerate RESULTS.md from results.json
  python3 results_page.py --add RUN.json       make RUN.json (collect_results.py's output) the latest run of its
                                               GPU(s) in results.json, then regenerate RESULTS.md; a section the
                                               run skipped keeps its recorded figures, marked with their run
  python3 results_page.py --check              exit 1 when RESULTS.md is not what results.json generates
  --results FILE and --page FILE name other files (run_gpu_suite.sh renders each run's own page with them).

The page renders the sections of a GPU entry it knows (environment, correctness, sass_check, benchmark) and
lists the others by name; the schema is in collect_results.py.
"""
import argparse
import json
import sys
from pathlib import Path

from collect_results import SCHEMA

HERE = Path(__file__).resolve().parent
KNOWN_SECTIONS = ("environment", "correctness", "sass_check", "benchmark", "logit_options", "external_kernels",
                  "earlier")
# What "earlier" says of a section kept from an earlier run: {SECTION: {"commit", "date", "command"}}.
PROVENANCE_KEYS = ("commit", "date", "command")
ENVIRONMENT_ROWS = (("gpu", "GPU"), ("driver", "driver"), ("cuda_driver", "CUDA (driver)"),
                    ("cuda_runtime", "CUDA runtime (benchmark)"), ("compute_sanitizer", "compute-sanitizer"),
                    ("cuobjdump", "cuobjdump"), ("python", "python"), ("torch", "torch"),
                    ("flashinfer", "FlashInfer"), ("commit", "commit"), ("date", "date (UTC)"),
                    ("command", "command"))
# The benchmark table's kernel columns, in order; results.json may hold more (listed under the table).
KERNEL_COLUMNS = (("cuda_fused", "ours fused"), ("cuda_splitk", "ours split-K"), ("cuda_fused_fp16", "ours fused fp16"),
                  ("cuda_splitk_fp16", "ours split-K fp16"), ("torch_cudnn", "cuDNN (torch)"),
                  ("torch_flash", "flash (torch)"), ("flashinfer_cuda_cores", "FlashInfer"),
                  ("flashinfer_tensor_cores", "FlashInfer TC"))
OURS = ("cuda_fused", "cuda_splitk")
OURS_FP16 = ("cuda_fused_fp16", "cuda_splitk_fp16")
FLASHINFER = ("flashinfer_cuda_cores", "flashinfer_tensor_cores")
# The fp8 cache table: per format, ours and FlashInfer's kernels on that cache (collect_results.py's names).
FP8_FORMATS = ("fp8_e4m3", "fp8_e5m2")


def fp8_kernels(kernels, cache):
    """The names collect_results.py gives `kernels` timed on an fp8 cache."""
    return tuple(f"{k}_{cache}" for k in kernels)


FP8_COLUMNS = tuple((name, f"{label} {cache[4:]}") for cache in FP8_FORMATS
                    for name, label in zip(fp8_kernels(OURS + FLASHINFER, cache),
                                           ("ours fused", "ours split-K", "FlashInfer", "FlashInfer TC")))
FLUSH_TITLES = {"dirty": "L2 flush leaving dirty lines (the default)",
                "clean": "L2 flush leaving clean lines (--clean-flush)"}


class ResultsError(Exception):
    """results.json (or a run's JSON) that cannot be rendered; the message names the file and what is wrong."""


def load(path):
    try:
        document = json.loads(Path(path).read_text())
    except OSError as error:
        raise ResultsError(f"cannot read {path}: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path} is not valid JSON: {error}") from error
    if not isinstance(document, dict) or not isinstance(document.get("gpus"), list):
        raise ResultsError(f'{path}: expected an object with a "gpus" list')
    if document.get("schema") != SCHEMA:  # another schema's sections would render wrong or not at all
        raise ResultsError(f"{path}: schema {document.get('schema')!r}, but these scripts read schema {SCHEMA}; "
                           "collect the run again with this checkout's collect_results.py")
    for i, gpu in enumerate(document["gpus"]):
        if not isinstance(gpu, dict) or not isinstance(gpu.get("environment"), dict) \
                or not isinstance(gpu["environment"].get("gpu"), str):
            raise ResultsError(f"{path}: gpus[{i}] has no environment.gpu (the GPU's name)")
        for key in KNOWN_SECTIONS:
            kind = list if key == "external_kernels" else dict
            if key in gpu and not isinstance(gpu[key], kind):
                raise ResultsError(f"{path}: gpus[{i}].{key} is not {'a list' if kind is list else 'an object'}")
    return document


def dumps(value, width=400):
    """results.json's text: a value on one compact line where that fits in width characters (a run, a benchmark
    row, a kernel), else an item a line, so that a diff shows the records that changed."""
    text = json.dumps(value, separators=(",", ":"))
    if len(text) <= width or not isinstance(value, (dict, list)) or not value:
        return text
    if isinstance(value, dict):
        return "{\n" + ",\n".join(json.dumps(k) + ":" + dumps(v, width) for k, v in value.items()) + "\n}"
    return "[\n" + ",\n".join(dumps(v, width) for v in value) + "\n]"


def table(header, rows, align=None):
    align = align or ["---"] * len(header)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def environment_section(env):
    absent = env.get("absent", {})
    rows = []
    known = [key for key, _ in ENVIRONMENT_ROWS]
    for key, label in ENVIRONMENT_ROWS + tuple((k, k) for k in sorted(set(env) | set(absent))
                                               if k not in known and k != "absent"):
        if key in env:
            value = f"`{env[key]}`" if key == "command" else env[key]
        elif key in absent:
            value = f"absent: {absent[key]}"
        else:
            continue
        rows.append((label, str(value).replace("|", "\\|")))
    return table(["", ""], rows)


def runs_summary(section, noun):
    """'N of M passed' for a section of runs, or why it was skipped; None when there is nothing to say."""
    if "skipped" in section:
        return f"skipped: {section['skipped']}"
    if "error" in section:
        return f"failed: {section['error']}"
    runs = section.get("runs", [])
    passed = sum(run.get("status") == "pass" for run in runs)
    return f"{passed} of {len(runs)} {noun} passed"


def worst_cell(run):
    worst = run.get("worst", {}).get(run.get("kernel"), {})
    return ", ".join(f"{dtype} {w:.3f}" for dtype, w in worst.items() if isinstance(w, (int, float))) or "-"


def status_cell(run):
    status = run.get("status", "?")
    if status == "skipped":
        return f"skipped: {run.get('reason', '')}"
    if status == "fail" and run.get("failed"):
        return "fail: " + ", ".join(run["failed"])
    return status


def failure_notes(runs, name):
    """A bullet per run that did not pass, its name, command and last lines, after a blank line; or nothing."""
    lines = []
    for run in runs:
        if run.get("status") in ("pass", "skipped"):
            continue
        lines.append(f"- {name(run)}: {run.get('status')}, exit {run.get('exit')}; `{run.get('command')}`")
        lines += [f"  - `{line}`" for line in run.get("tail", [])]
        lines += [f"  - unreadable: {run['unreadable']}"] if run.get("unreadable") else []
    return [""] + lines if lines else []


def correctness_section(correctness, provenance=lambda part: []):
    """provenance(part): the line saying which earlier run a part was kept from (earlier_line), or none."""
    lines = provenance("catalogue")
    catalogue = correctness.get("catalogue", {})
    cases = correctness.get("cases_per_property", "?")
    lines.append(f"GPU catalogue (gpu_catalogue_test, {cases} cases per property, one process per suite and "
                 f"kernel): {runs_summary(catalogue, 'processes')}.")
    if catalogue.get("runs"):
        lines.append("")
        lines += table(["suite", "kernel", "result", "tests", "worst error / bound by dtype"],
                       [(r.get("suite"), r.get("kernel"), status_cell(r), r.get("tests_run", "-"), worst_cell(r))
                        for r in catalogue["runs"]], ["---", "---", "---", "---:", "---"])
        lines += failure_notes(catalogue["runs"], lambda r: f"{r.get('suite')} {r.get('kernel')}")
    sanitizers = correctness.get("sanitizers", {})
    lines += [""] + provenance("sanitizers") + [
        f"compute-sanitizer on `pacheck check` (UlpBoundedAgreement and MaskedLanesZeroWeight, "
        f"{correctness.get('sanitizer_cases', '?')} cases each): {runs_summary(sanitizers, 'runs')}."]
    if sanitizers.get("runs"):
        runs = sanitizers["runs"]
        kernels = list(dict.fromkeys(r.get("kernel") for r in runs))
        tools = list(dict.fromkeys(r.get("tool") for r in runs))
        rows = []
        for tool in tools:
            row = [tool]
            for kernel in kernels:
                mine = [r for r in runs if r.get("tool") == tool and r.get("kernel") == kernel]
                bad = [f"{r.get('suite')}: {r.get('status')}"
                       + (f", {r['errors']} errors" if r.get("errors") else "") for r in mine
                       if r.get("status") != "pass"]
                row.append(f"{len(mine) - len(bad)} of {len(mine)} clean" + (f" ({'; '.join(bad)})" if bad else "")
                           if mine else "-")
            rows.append(row)
        lines += [""] + table(["tool"] + kernels, rows)
        lines += ["", "Each run draws the problems of a catalogue suite: its shapes (GpuEngineShapes...: "
                      "serving-engine shapes) and its pinned kernel choices (...Deep, ...Wide: that layout)."]
        lines += failure_notes(runs, lambda r: f"{r.get('kernel')} {r.get('tool')} {r.get('suite')}")
    if "gpu_mutants" in correctness:
        mutants = gpu_mutants_lines(correctness["gpu_mutants"])
        lines += mutants[:1] + provenance("gpu_mutants") + mutants[1:]
    return lines


def gpu_mutants_lines(section):
    """The GPU kill matrix over its seeds: per mutant its killers, cases to the first kill (median and worst over
    the seeds) and the sanitizer tools that killed it."""
    runs = section.get("runs", [])
    seeds = ", ".join(str(r.get("seed")) for r in runs)
    lines = ["", f"GPU mutants (`pacheck mutants --gpu`, seeds {seeds or '-'}): {runs_summary(section, 'seeds')}."]
    mutants = section.get("mutants", {})
    lines += failure_notes(runs, lambda r: f"seed {r.get('seed')}")
    if not mutants:
        return lines
    rows = []
    for name, mutant in mutants.items():
        by_seed = mutant.get("cases_to_first_kill", {})
        firsts = sorted(n for n in by_seed.values() if n)
        survived = len(by_seed) - len(firsts)
        median = (firsts[(len(firsts) - 1) // 2] + firsts[len(firsts) // 2]) / 2 if firsts else None
        killers = sorted(mutant.get("killed_by", {}))
        tools = sorted({t for found in mutant.get("sanitizers", {}).values() for t in found})
        kills = f"{median:g} / {firsts[-1]}" if firsts else "-"
        rows.append((f"`{name}`", mutant.get("description", ""), ", ".join(killers) or "SURVIVED",
                     kills + (f" (survived {survived} seeds)" if survived and firsts else ""),
                     ", ".join(tools) or "-"))
    lines += [""] + table(["mutant", "bug", "killed by", "cases to first kill (median / worst)", "sanitizers"], rows,
                          ["---", "---", "---", "---:", "---"])
    skipped = {r["sanitizers_skipped"] for r in runs if r.get("sanitizers_skipped")}
    lines += ["", f"Sanitizers skipped: {'; '.join(sorted(skipped))}."] if skipped else []
    return lines


def sass_section(sass):
    lines = ["Copies that read a cache descriptor no instruction writes (`sass_descriptor_check.py`): "
             f"{runs_summary(sass, 'binaries')}."]
    if sass.get("runs"):
        lines += [""] + table(["binary", "result", "kernels with LDGSTS copies", "reading an unwritten descriptor"],
                              [(r.get("binary"), status_cell(r), r.get("kernels_checked", "-"),
                                r.get("kernels_unwritten", "-")) for r in sass["runs"]],
                              ["---", "---", "---:", "---:"])
        lines += failure_notes(sass["runs"], lambda r: r.get("binary"))
    return lines


def row_kernels(flush, row):
    """{kernel: {"us", "tbps", "split_size"?} or {"error"}} of a benchmark row: its "times" name the flush's
    "kernels" in order."""
    kernels = {}
    for name, time in zip(flush.get("kernels", []), row.get("times", [])):
        if time is not None:
            kernels[name] = dict(zip(("us", "tbps", "split_size"), time)) if isinstance(time, list) else time
    return kernels


def timed(entry):
    return entry if isinstance(entry, dict) and isinstance(entry.get("us"), (int, float)) and entry["us"] > 0 \
        else None


def kernel_cell(entry):
    if entry is None:
        return "-"
    if timed(entry) is None:
        return "error" if "error" in entry else "-"
    return f"{entry['us']:.1f} ({entry['tbps']:.2f})"


def ratio(kernels, ours, theirs):
    """The bandwidth of the fastest of `ours` over the fastest of `theirs` (their time over ours: the bytes are the
    same), or '-'."""
    fastest = [timed(kernels.get(k)) for k in ours if timed(kernels.get(k))]
    others = [timed(kernels.get(k)) for k in theirs if timed(kernels.get(k))]
    if not fastest or not others:
        return "-"
    return f"{min(e['us'] for e in others) / min(e['us'] for e in fastest):.2f}"


def benchmark_section(benchmark):
    if "skipped" in benchmark:
        return [f"Skipped: {benchmark['skipped']}."]
    lines = ["Decode, bf16 K/V (ours also fp16), head dim 128, block size 16, 8 KV heads, every sequence's blocks "
             "scattered through one pool; the L2 flushed before each repeat; the median of CUDA-event times. A cell "
             "is the time in us and (in brackets) TB/s: K + V + Q + output bytes over the time. A ratio is our "
             "bandwidth over theirs (above 1: ours is faster): split-K and fused against cuDNN, the faster of ours "
             "against the faster FlashInfer kernel, and the faster of ours in fp16 against the faster in bf16. "
             "FlashInfer: BatchDecodeWithPagedKVCacheWrapper (NHD), planned once per shape, on the CUDA cores and on "
             "the tensor cores (TC)."]
    for flush in benchmark.get("flushes", []):
        name = flush.get("flush", "?")
        lines += ["", f"#### {FLUSH_TITLES.get(name, name)}", ""]
        sources = []
        for source, facts in flush.get("sources", {}).items():
            status = facts.get("status", "?")
            detail = ", ".join(f"{k} {facts[k]}" for k in ("torch", "cudnn", "flashinfer") if k in facts)
            sources.append(f"{source}: {status}" + (f" ({detail})" if detail and status == "ok" else "")
                           + (f" ({facts['reason']})" if "reason" in facts else ""))
        copy = f"device-to-device copy {flush['copy_tbps']:.2f} TB/s (read + write); " if "copy_tbps" in flush else ""
        lines.append(f"{copy}{'; '.join(sources)}.")
        rows, other = [], set()
        shapes = [(row, row_kernels(flush, row)) for row in flush.get("rows", [])]
        for row, kernels in shapes:
            other |= set(kernels) - {k for k, _ in KERNEL_COLUMNS}
            split = kernels.get("cuda_splitk", {}).get("split_size", "-")
            rows.append([row.get("gqa"), row.get("batch"), row.get("context")]
                        + [kernel_cell(kernels.get(k)) for k, _ in KERNEL_COLUMNS]
                        + [split, ratio(kernels, ["cuda_splitk"], ["torch_cudnn"]),
                           ratio(kernels, ["cuda_fused"], ["torch_cudnn"]), ratio(kernels, OURS, FLASHINFER),
                           ratio(kernels, OURS_FP16, OURS)])
        header = ["gqa", "batch", "context"] + [label for _, label in KERNEL_COLUMNS] + [
            "split", "split-K x cuDNN", "fused x cuDNN", "ours x FlashInfer", "fp16 x bf16"]
        lines += [""] + table(header, rows, ["---:"] * len(header))
        other -= {k for k, _ in FP8_COLUMNS}
        lines += fp8_table(shapes)
        if other:
            lines += ["", "Also timed (in results.json): " + ", ".join(sorted(other)) + "."]
    return lines


def fp8_table(shapes):
    """The fp8 caches' table of a flush's (row, its kernels): nothing when no fp8 cache was timed."""
    cells = []
    for row, kernels in shapes:
        if not any(k in kernels for k, _ in FP8_COLUMNS):
            continue
        cells.append([row.get("gqa"), row.get("batch"), row.get("context")]
                     + [kernel_cell(kernels.get(k)) for k, _ in FP8_COLUMNS]
                     + [ratio(kernels, fp8_kernels(OURS, c), OURS) for c in FP8_FORMATS]
                     + [ratio(kernels, fp8_kernels(OURS, c), fp8_kernels(FLASHINFER, c)) for c in FP8_FORMATS])
    if not cells:
        return []
    header = (["gqa", "batch", "context"] + [label for _, label in FP8_COLUMNS]
              + [f"{c[4:]} x bf16" for c in FP8_FORMATS] + [f"{c[4:]} x FlashInfer" for c in FP8_FORMATS])
    return ["", "fp8 KV caches, the same shapes with bf16 queries and output, K and V in e4m3 or e5m2 with scales "
                "(ours per KV head, FlashInfer's per tensor): TB/s counts a byte per K or V element. `x bf16` is "
                "the faster of ours on the cache against the faster of ours in bf16 (tokens per second: the same "
                "work), `x FlashInfer` against the faster FlashInfer kernel on the same cache.", ""] \
        + table(header, cells, ["---:"] * len(header))


OPTION_TITLES = {"soft_cap": "soft cap 30", "alibi": "ALiBi", "sinks": "sinks", "window": "window 4096"}
REFERENCE_TITLES = {"none": "no option", "window_reference": "context 4096, no window"}


def logit_options_section(section):
    """Each option's time over the same kernel's without it, minus 1 (a window: against a context of its length)."""
    if "skipped" in section:
        return [f"Skipped: {section['skipped']}."]
    lines = ["paged_attention_bench with one logit option (--soft-cap 30, --alibi, --sinks, --window 4096) and without, "
             "decode with bf16 K/V, head dim 128, block size 16, 8 KV heads, the default flush. A cost is the time with "
             "the option over the time without it, minus 1; a window reads only its keys, so it is timed against a "
             "context of the window's length.", ""]
    rows = []
    for row in section.get("rows", []):
        label = OPTION_TITLES.get(row.get("option"), row.get("option"))
        against = REFERENCE_TITLES.get(row.get("against"), row.get("against"))
        if "error" in row:
            rows.append([label, row.get("gqa"), "-", "-", against, f"error: {row['error']}", "-"])
            continue
        kernels = row.get("kernels", {})
        costs = [f"{kernels[k]['cost'] * 100:+.1f}% ({kernels[k]['us']:.1f} / {kernels[k]['reference_us']:.1f} us)"
                 if k in kernels else "-" for k in OURS]
        rows.append([label, row.get("gqa"), row.get("batch"), row.get("context"), against] + costs)
    return lines + table(["option", "gqa", "batch", "context", "against", "fused cost", "split-K cost"], rows)


def external_section(section):
    """Kernels checked through pacheck's doors (Python, plugin): per kernel, the properties held and failed."""
    lines = ["Kernels that live outside pacheck, checked through its doors; each failure's verdict is in the "
             "kernel's folder (`examples/`).", ""]
    for run in section:
        when = "".join(f", {key} {run[key]}" for key in ("commit", "date") if run.get(key))
        lines += [f"`{run['command']}` ({run['door']}, {run['cases_per_property']} cases per property{when}):", ""]
        rows = []
        for kernel in run["kernels"]:
            held, failed = kernel.get("held", []), kernel.get("failed", [])
            rows.append([f"`{kernel['name']}`", f"{len(held)} of {len(held) + len(failed)}",
                         ", ".join(failed) or "-"])
        lines += table(["kernel", "properties held", "failed"], rows) + [""]
    return lines[:-1]


def earlier_line(gpu, section):
    """Where a section kept from an earlier run (add_run) came from, as a line above it; nothing otherwise."""
    provenance = gpu.get("earlier", {}).get(section)
    if not provenance:
        return []
    return [f"From an earlier run (commit {provenance.get('commit') or '?'}, {provenance.get('date') or '?'}, "
            f"`{provenance.get('command') or '?'}`): the latest run above did not run this.", ""]


def render(document, results_name="bench/results.json"):
    lines = [f"<!-- The GPU results page, generated by bench/results_page.py from {results_name}: do not edit. -->",
             "# GPU results", "", "The latest run of `bench/run_gpu_suite.sh` on each GPU."]
    if not document["gpus"]:
        lines += ["", "No GPU run has been recorded yet. To record one: on a GPU machine, "
                      "`bench/run_gpu_suite.sh BUILD OUT`; then here, `python3 bench/results_page.py --add "
                      "OUT/results.json`, and commit `bench/results.json` and `bench/RESULTS.md`."]
    for gpu in document["gpus"]:
        lines += ["", f"## {gpu['environment']['gpu']}", ""] + environment_section(gpu["environment"])
        for key, title, render_section in (("correctness", "Correctness", correctness_section),
                                           ("sass_check", "SASS check", sass_section),
                                           ("benchmark", "Benchmark", benchmark_section),
                                           ("logit_options", "Logit options' cost", logit_options_section),
                                           ("external_kernels", "Kernels from elsewhere", external_section)):
            if key in gpu:
                parts = {"provenance": lambda part: earlier_line(gpu, f"{key}.{part}")} if key in SECTION_PARTS else {}
                lines += ["", f"### {title}", ""] + earlier_line(gpu, key) + render_section(gpu[key], **parts)
        unknown = [key for key in gpu if key not in KNOWN_SECTIONS]
        if unknown:
            lines += ["", "Sections in results.json this page does not render yet: " + ", ".join(unknown) + "."]
    return "\n".join(lines) + "\n"


def merge_environments(old, new):
    """The environment of two runs of one commit on one GPU: a tool either run found counts as present, and the
    page names both commands and dates."""
    merged = {**old, **new}
    absent = {}
    for tool, why in {**old.get("absent", {}), **new.get("absent", {})}.items():
        if tool in old and tool not in old.get("absent", {}):
            merged[tool] = old[tool]
        elif tool in new and tool not in new.get("absent", {}):
            merged[tool] = new[tool]
        else:
            absent[tool] = why
    merged["absent"] = absent
    for key in ("command", "date"):
        if old.get(key) and old.get(key) != new.get(key):
            merged[key] = f"{old[key]}; {new[key]}"
    return merged


def skipped(gpu, section):
    return section not in gpu or (isinstance(gpu[section], dict) and "skipped" in gpu[section])


# A section whose parts runs make apart (run_gpu_suite.sh's SKIP_CHECKS, SKIP_MUTANTS): each part merges as a
# section does, with the settings that describe it; its provenance is "SECTION.PART".
SECTION_PARTS = {"correctness": {"catalogue": ("cases_per_property",), "sanitizers": ("sanitizer_cases",),
                                 "gpu_mutants": ()}}


def merge_parts(parts, old_section, new_section):
    """new_section with each of `parts` it skipped taken from old_section (where that one ran), and their names."""
    merged, kept = dict(new_section), []
    for part, settings in parts.items():
        if skipped(new_section, part) and not skipped(old_section, part):
            merged[part] = old_section[part]
            merged.update({key: old_section[key] for key in settings if key in old_section})
            kept.append(part)
    return merged, kept


def add_run(results, run):
    """results with each GPU of run replacing the entry of the same name, or appended. A section the run skipped
    keeps the recorded one: from a run of the same commit (a correctness run and a benchmark run made apart) as part
    of this run, from another commit under "earlier", which names the run it came from (the page says so beside
    it), so that a partial run never drops figures it did not replace."""
    gpus = list(results["gpus"])
    for gpu in run["gpus"]:
        names = [g["environment"]["gpu"] for g in gpus]
        name = gpu["environment"]["gpu"]
        if name not in names:
            gpus.append(gpu)
            continue
        old = gpus[names.index(name)]
        same_commit = old["environment"].get("commit") == gpu["environment"].get("commit")
        merged, earlier, was = dict(gpu), {}, old.get("earlier", {})
        if same_commit:
            merged["environment"] = merge_environments(old["environment"], gpu["environment"])
        old_run = {key: old["environment"].get(key) for key in PROVENANCE_KEYS}

        def keep(key, *older):  # a section (or part) kept from old: the run it came from, unless this one
            provenance = next((was[k] for k in (key,) + older if was.get(k)), None)
            if provenance or not same_commit:
                earlier[key] = provenance or old_run

        for section, value in old.items():
            if section in ("environment", "earlier") or skipped(old, section):
                continue
            if section in SECTION_PARTS and isinstance(value, dict) and not skipped(gpu, section):
                merged[section], kept = merge_parts(SECTION_PARTS[section], value, gpu[section])
                for part in kept:
                    keep(f"{section}.{part}", section)
            elif skipped(gpu, section):
                merged[section] = value
                keep(section)
        merged.pop("earlier", None)
        if earlier:
            merged["earlier"] = earlier
        gpus[names.index(name)] = merged
    return {**results, "gpus": gpus}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=str(HERE / "results.json"), help="default: bench/results.json")
    parser.add_argument("--page", default=str(HERE / "RESULTS.md"), help="default: bench/RESULTS.md")
    parser.add_argument("--add", metavar="RUN_JSON", help="a run's results.json to record first")
    parser.add_argument("--check", action="store_true", help="only compare the page with what the JSON generates")
    args = parser.parse_args(argv)
    if args.add and args.check:
        parser.error("--add and --check do not go together")
    try:
        results = load(args.results)
        if args.add:
            results = add_run(results, load(args.add))
            Path(args.results).write_text(dumps(results) + "\n")
        results_name = "bench/results.json" if Path(args.results).resolve() == HERE / "results.json" \
            else Path(args.results).name
        page = render(results, results_name)
    except ResultsError as error:
        print(f"results_page: {error}", file=sys.stderr)
        return 2
    if args.check:
        current = Path(args.page).read_text() if Path(args.page).exists() else None
        if current != page:
            print(f"results_page: {args.page} is not what {args.results} generates: run python3 bench/results_page.py",
                  file=sys.stderr)
            return 1
        print(f"{args.page} is up to date")
        return 0
    Path(args.page).write_text(page)
    print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
