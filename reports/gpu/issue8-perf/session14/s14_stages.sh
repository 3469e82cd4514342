#!/bin/bash
# Session 14, call 2: what split-K's merge (and its dependent launch) costs: cuda_splitk against its attention
# kernel alone (--stages), at the benchmark's split and at others.
cd "$(dirname "$0")"
for shape in 4,1,32768 8,1,32768 4,1,8192 4,1,1024 4,8,8192; do for rep in 1 2; do
  echo "== $shape rep $rep"; timeout 60 ./paged_attention_bench --stages --only $shape --json /tmp/x.json 2>&1 | grep -E "cuda_splitk|no_merge|WARN"
done; done
for split in 512 704 768 2048; do
  echo "== 4,1,32768 split $split"; timeout 60 ./paged_attention_bench --stages --split $split --only 4,1,32768 --json /tmp/x.json 2>&1 | grep -E "cuda_splitk|no_merge|WARN"
done
