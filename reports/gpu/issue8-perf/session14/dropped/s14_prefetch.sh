#!/bin/bash
# Session 14: the merge kernel touching its partial states' addresses (L2 prefetch) before griddepcontrol.wait,
# against 637567e (head_bench), batch-1 and batch-8 split-K shapes, 3 interleaved runs each.
cd "$(dirname "$0")"
for shape in 4,1,32768 8,1,32768 4,1,8192 4,1,1024 4,8,8192; do for rep in 1 2 3; do
  for b in head_bench prefetch_bench; do
    echo "== $b $shape rep $rep"; timeout 60 ./$b --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_splitk|no_merge|WARN"
  done
done; done
