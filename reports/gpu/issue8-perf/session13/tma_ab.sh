#!/bin/bash
# Production (tensor copies, 3 stages) against tc_s3_t2048 (the previous production: 16-byte asynchronous copies)
# and tc_s2_t2048_tma (tensor copies, 2 stages: 3 blocks per multiprocessor), all in one binary, twice per shape.
cd "$(dirname "$0")"
for shape in ${SHAPES:-4,1,32768 8,1,32768 4,1,8192 4,8,8192 4,64,8192 8,64,8192 4,256,8192 8,256,8192}; do
  for rep in 1 2; do
    echo "== $shape rep $rep"; timeout 60 ./paged_attention_bench --layouts --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_|tc_s3_t2048|_tma|WARN"
  done
done
