# Times the Python bridge's own cost per kernel call: a trivial kernel on a four-sequence decode problem, called
# directly and through pacheck (lend the problem, call, read the output back, revoke the loan).
"""Usage: python bench/python_bridge_cost.py [--repeats N] [--dtype fp32|fp16|bf16] [--contexts 512,700,1000,333]

Prints, per kernel, the median time of one direct call, one call through the bridge, and their difference: the
bridge's cost per call (a property's case calls the kernel one to three times). The kernels are trivial, so the
difference is the bridge's alone: one returns a preallocated output, one first touches every input a launch reads
(the views, the tables, the lengths); the third reads the storage-dtype arrays (for fp16 and bf16, conversions of
the whole pool) and the fourth (with torch) builds pacheck.torch_inputs: costs a kernel opts into."""
import argparse
import importlib.util
import statistics
import time

import numpy as np

import pacheck
from pacheck import _pacheck


def median_seconds(call, repeats: int, rounds: int = 7) -> float:
    """The median over `rounds` of the mean time of `repeats` calls (fewer where a round would pass 0.2 s)."""
    start = time.perf_counter()
    call()
    repeats = max(1, min(repeats, int(0.2 / max(time.perf_counter() - start, 1e-9))))
    means = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        means.append((time.perf_counter() - start) / repeats)
    return statistics.median(means)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2000, help="calls per timed round")
    parser.add_argument("--dtype", default="bf16", choices=["fp32", "fp16", "bf16"])
    parser.add_argument("--contexts", default="512,700,1000,333", help="the decode sequences' context lengths")
    args = parser.parse_args()

    contexts = [int(c) for c in args.contexts.split(",")]
    problem = pacheck.make_problem(dtype=args.dtype, num_kv_heads=8, gqa_ratio=4, head_dim=128, block_size=16,
                                   sequences=[(c, 1) for c in contexts], seed=1)
    shape = (problem.total_queries, problem.num_query_heads, problem.head_dim)
    output_dtype = np.float16 if args.dtype == "fp16" else np.float32
    output = np.zeros(shape, dtype=output_dtype)

    def returns_output(problem):
        return output

    def reads_inputs(problem):
        problem.queries, problem.k_pool, problem.v_pool, problem.scale, problem.tile_size
        problem.block_tables, problem.context_lens, problem.query_lens, problem.query_starts
        return output

    def reads_storage(problem):  # fp16 and bf16 values as bit patterns: copies of the pools
        problem.queries_storage, problem.k_pool_storage, problem.v_pool_storage
        return output

    def torch_inputs(problem):  # the inputs as CPU torch tensors of the problem's dtype
        pacheck.torch_inputs(problem)
        return output

    kernels = [returns_output, reads_inputs, reads_storage]
    if importlib.util.find_spec("torch") is not None:
        kernels.append(torch_inputs)

    capabilities = {"dtypes": ["fp32", "fp16", "bf16"], "modes": ["decode"], "max_head_dim": 256}
    print(f"problem: {problem}")
    print(f"pool: {problem.k_pool.size} values per pool; output {shape} {np.dtype(output_dtype).name}")
    print(f"{'kernel':<16}{'direct (us)':>14}{'bridged (us)':>14}{'bridge (us)':>14}")
    for kernel in kernels:
        declared = _pacheck.DeclaredKernel(kernel, kernel.__name__, capabilities, "fp32_online_softmax")
        direct = median_seconds(lambda: kernel(problem), args.repeats)
        bridged = median_seconds(lambda: declared.run(problem), args.repeats)
        print(f"{kernel.__name__:<16}{direct * 1e6:>14.1f}{bridged * 1e6:>14.1f}{(bridged - direct) * 1e6:>14.1f}")


if __name__ == "__main__":
    main()
