#!/bin/bash
# Split sizes at batch 1 for production (3 stages, 2 blocks/SM) and tc_s2_t2048_tma (2 stages, 3 blocks/SM).
cd "$(dirname "$0")"
for shape in 4,1,32768 8,1,32768 4,1,8192; do
  for split in 512 640 704 768 1024 1408; do
    echo "== $shape split $split"; timeout 60 ./paged_attention_bench --layouts --only $shape --split $split --json /tmp/x.json 2>&1 | grep -E "cuda_splitk|tc_s3_t2048\+sk|_tma\+sk|WARN"
  done
done
