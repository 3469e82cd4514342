#!/bin/bash
# Session 14, last call: on the committed kernels (637567e), the layouts pinned at batch 64 and 256, 8k, and split
# sizes at batch 1, 32k (one run each, median of 20 repeats, L2 flushed).
cd "$(dirname "$0")"
for shape in 4,64,8192 8,64,8192 4,256,8192 8,256,8192 4,64,32768; do for layout in deep wide; do for rep in 1 2; do
  echo "== $shape $layout rep $rep"; PACHECK_TENSOR_CORE_LAYOUT=$layout timeout 60 ./paged_attention_bench --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_fused"
done; done; done
for shape in 4,1,32768 8,1,32768; do for split in 768 896 1024 1152 1280; do
  echo "== $shape split $split"; timeout 60 ./paged_attention_bench --only $shape --split $split --json /tmp/x.json 2>&1 | grep -E "cuda_splitk"
done; done
