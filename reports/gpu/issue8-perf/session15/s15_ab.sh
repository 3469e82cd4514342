#!/bin/bash
# Session 15's A/B calls on the H200: session 14's s14_ab.sh (copied beside this script into .gpu-bin; the
# catalogue, 4 suites x 2 kernels at CASES per property, then each shape timed by $BASELINE and each of
# $CANDIDATES, twice, interleaved), then memcheck with the split-K merge's shape automatic or pinned either way
# (the calls ran the two as one file).
#   call 1 (the merge, a head lane per thread): BASELINE=head_bench CANDIDATES="paged_attention_bench
#     batch16_bench" BENCH_ARGS=--stages MEMCHECK=1 CASES=150 LIMIT=150 SHAPES="..." (head_bench: 7cee714;
#     paged_attention_bench: batches of 32 splits, batch16_bench: of 16) -> merge_lane_per_thread_ab.log
#   call 2 (head lanes per thread and rows per block, batches of 16): CANDIDATES="k1_bench k2_bench k4row_bench
#     k2row_bench" (1 lane a thread, 128 threads a row; 2 lanes, 2 rows a block; 4 lanes, a 32-thread block a row;
#     2 lanes, a 64-thread block a row), the catalogue and memcheck left out -> merge_shapes_ab.log
#   call 3 (the shape chosen per launch, then at most 4 rows per multiprocessor for lanes; 74bb737 has 1):
#     CANDIDATES="paged_attention_bench lanes_bench warps_bench" MEMCHECK=1 CASES=300 LIMIT=200 (lanes_bench and
#     warps_bench: the same build with PACHECK_SPLITK_MERGE pinned) -> merge_shape_choice_ab.log. Its memcheck of
#     the pinned shapes ran the engine-shape draw on the automatic shape (a bug of this loop, mended below).
# MEMCHECK=1 adds compute-sanitizer memcheck (general draw and engine shapes, 40 cases): cuda_fused, and cuda_splitk
# with the merge's shape automatic, lanes and warps.
cd "$(dirname "$0")"
MEMCHECK=0 bash s14_ab.sh
[ "${MEMCHECK:-0}" = 1 ] && for run in cuda_splitk cuda_fused cuda_splitk:lanes cuda_splitk:warps; do for draw in general engine; do
  merge=${run#*:}; [ "$merge" = "$run" ] && merge=automatic; v=${run%:*}
  PACHECK_SPLITK_MERGE=$merge timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./pacheck check --variant $v --property UlpBoundedAgreement \
    --property Determinism --cases 40 $([ $draw != general ] && echo --engine-shapes) > /tmp/mc-$v-$draw.log 2>&1
  echo "memcheck $v (merge $merge) $draw exit $?"; grep -E "ERROR SUMMARY" /tmp/mc-$v-$draw.log | head -4
done; done
