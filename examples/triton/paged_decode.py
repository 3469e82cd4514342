# A paged-decode kernel in Triton, cpu_streaming's online-softmax loop: one program per (sequence, query head) walks
# the sequence's keys through its block table, TILE keys at a time.
"""Paged decode in Triton, written as a kernel author would, and checked by pacheck (test_paged_decode.py).

`paged_decode(problem)` runs it on a pacheck.Problem; with rescale=False it has a planted bug (the accumulator is not
rescaled when the running max grows), which pacheck must catch."""
import torch
import triton
import triton.language as tl

import pacheck

LOG2_E = 1.4426950408889634


@triton.jit
def _paged_decode_kernel(q_ptr, k_ptr, v_ptr, out_ptr, tables_ptr, context_lens_ptr, scale_log2,
                         stride_q_row, stride_q_head, stride_k_block, stride_k_slot, stride_k_head,
                         stride_table, stride_o_row, stride_o_head, head_dim, block_size, gqa,
                         BLOCK_D: tl.constexpr, TILE: tl.constexpr, RESCALE: tl.constexpr):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    kv_head = head // gqa
    context = tl.load(context_lens_ptr + seq)
    dims = tl.arange(0, BLOCK_D)
    in_head = dims < head_dim
    q = tl.load(q_ptr + seq * stride_q_row + head * stride_q_head + dims, mask=in_head, other=0.0).to(tl.float32)
    m = tl.full([], float("-inf"), tl.float32)
    denominator = tl.zeros([], tl.float32)
    acc = tl.zeros([BLOCK_D], tl.float32)
    for start in range(0, context, TILE):
        keys = start + tl.arange(0, TILE)
        live = keys < context  # masked keys are never loaded: a recycled slot may hold NaN
        blocks = tl.load(tables_ptr + seq * stride_table + keys // block_size, mask=live, other=0)
        rows = blocks.to(tl.int64) * stride_k_block + (keys % block_size) * stride_k_slot + kv_head * stride_k_head
        both = live[:, None] & in_head[None, :]
        k = tl.load(k_ptr + rows[:, None] + dims[None, :], mask=both, other=0.0).to(tl.float32)
        # Logits in the log2 domain (scale_log2 = scale * log2(e)) and exp2, so that the max key's weight is
        # exp2(0) = 1: a query that sees one key must return that key's V exactly (SingleKeyReturnsItsValue).
        scores = tl.where(live, tl.sum(k * q[None, :], axis=1) * scale_log2, float("-inf"))
        m_new = tl.maximum(m, tl.max(scores, axis=0))
        alpha = tl.exp2(m - m_new)  # 0 on the first tile (m = -inf)
        p = tl.exp2(scores - m_new)
        v = tl.load(v_ptr + rows[:, None] + dims[None, :], mask=both, other=0.0).to(tl.float32)
        if RESCALE:
            acc = acc * alpha
        acc += tl.sum(p[:, None] * v, axis=0)
        denominator = denominator * alpha + tl.sum(p, axis=0)
        m = m_new
    out = tl.math.div_rn(acc, denominator)  # IEEE division: fp32 `/` here is div.full, within 2 ulp
    tl.store(out_ptr + seq * stride_o_row + head * stride_o_head + dims, out.to(out_ptr.dtype.element_ty),
             mask=in_head)


def paged_decode(problem, *, tile=32, rescale=True):
    """The kernel on a pacheck decode problem (one query per sequence); returns [sequences, query heads, head_dim]."""
    x = pacheck.torch_inputs(problem, device="cuda")
    sequences, heads = len(problem.sequences), problem.num_query_heads
    out = torch.empty((sequences, heads, problem.head_dim), dtype=x.queries.dtype, device="cuda")
    tables = x.block_tables.contiguous()
    _paged_decode_kernel[(sequences, heads)](
        x.queries, x.k_pool, x.v_pool, out, tables, x.context_lens, problem.scale * LOG2_E,
        x.queries.stride(0), x.queries.stride(1), x.k_pool.stride(0), x.k_pool.stride(1), x.k_pool.stride(2),
        tables.stride(0), out.stride(0), out.stride(1), problem.head_dim, problem.block_size, problem.gqa_ratio,
        BLOCK_D=triton.next_power_of_2(problem.head_dim), TILE=tile, RESCALE=rescale,
        # No multiply-add contraction (Triton contracts by default): it fused the numerator's and the denominator's copies of
        # the weights differently, one key's output ~30 ulp off (README.md).
        enable_fp_fusion=False)
    return out


# Decode in every dtype with fp32 sums, any head dim up to 256, any block size and GQA ratio.
CAPABILITIES = {"dtypes": ["fp32", "fp16", "bf16"], "modes": ["decode"], "max_head_dim": 256}
# fp32 logits and sums, exp2 by ex2.approx (within 2 ulp, subnormal results flushed): the fp32 online-softmax model
# with the flush's 2^-126 per weight. The scale times log2(e) is a logit rounding the stock model already counts.
ERROR_MODEL = {"weight_underflow": 2.0 ** -126}
