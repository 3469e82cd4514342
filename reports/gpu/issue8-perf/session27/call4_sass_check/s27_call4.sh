#!/bin/bash
# Session 27, call 4 on the H200 (run from .gpu-bin): the review's sass_descriptor_check.py (a 64-bit write covers
# the next register only for .64 and .WIDE results; a kernel in several cubins checked in each) on the landed
# build's three binaries (2906aa3's kernels) and on session 26's call-5 build (E1_bench: the positive control).
cd "$(dirname "$0")"
for f in *.xz; do xz -d -f $f; done
for f in paged_attention_bench gpu_catalogue_test pacheck E1_bench; do
  echo "== $f"; cuobjdump -sass $f > /tmp/$f.sass; python3 ./sass_descriptor_check.py < /tmp/$f.sass; echo "exit $?"
  echo "LDGSTS with a descriptor: $(grep -c 'LDGSTS.*desc\[' /tmp/$f.sass); kernels listed: $(grep -c 'Function :' /tmp/$f.sass)"
done > $OUT/sass_check4.txt 2>&1
cat $OUT/sass_check4.txt
# One faulting kernel's SASS, for the record: the 32-lane production kernel of E1_bench.
k=$(python3 ./sass_descriptor_check.py < /tmp/E1_bench.sass | grep -o '_ZN[^ ]*Li32ELi8E[^ ]*' | head -n 1)
[ -n "$k" ] && cuobjdump -sass -fun "$k" E1_bench | xz -9 > $OUT/e1_32_lane_kernel.sass.xz
ls -la $OUT
