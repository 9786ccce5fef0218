set -u
B=/tmp/b
cmake -G Ninja -S compiler/runtime -B $B -DDYNQUAL_WITH_HIP=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDQ_GTEST_SOURCE_DIR=$PWD/.dev/gpu/googletest -DDQ_BENCHMARK_SOURCE_DIR=$PWD/.dev/gpu/benchmark >/dev/null && ninja -C $B dq-bench > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
( ninja -C $B -j8 dq_runtime_hip_tests > $OUT/build-tests.log 2>&1 ) &
BT=$!
d=.dev/gpu-generate/decoder_0p85b
python3 scripts/decoder_weights.py $d > $OUT/w.log 2>&1 && python3 scripts/assemble_sidecar.py $d/model.dqp $d >> $OUT/w.log 2>&1 || { tail $OUT/w.log; exit 1; }
G="$B/dq-bench generate $d/model.dqp --device hip --prompt-len 128 --gen-tokens 33"
DQ_HIP_PROFILE=1 $G --warmup 0 --reps 1 > $OUT/p-strict.json 2> $OUT/p-strict.txt
DQ_HIP_PROFILE=1 DQ_HIP_BLAS_MATH=default $G --warmup 0 --reps 1 > $OUT/p-default.json 2> $OUT/p-default.txt
DQ_HIP_PROFILE=1 DQ_HIP_GEMM_SINGLE=1 $G --warmup 0 --reps 1 > $OUT/p-single.json 2> $OUT/p-single.txt
DQ_HIP_PROFILE=1 DQ_HIP_GEMM_SINGLE=1 DQ_HIP_BLAS_MATH=default $G --warmup 0 --reps 1 > $OUT/p-both.json 2> $OUT/p-both.txt
$G --warmup 1 --reps 3 > $OUT/n-strict.json 2> $OUT/n-strict.txt
DQ_HIP_GEMM_SINGLE=1 DQ_HIP_BLAS_MATH=default $G --warmup 1 --reps 3 > $OUT/n-both.json 2> $OUT/n-both.txt
for f in p-strict p-default p-single p-both n-strict n-both; do python3 -c "
import json
d=json.load(open('$OUT/$f.json')); print('$f', 'ttft', d['ttft_ms']['median'], 'tps', d['tps']['median'], d['tokens'][:8] if 'tokens' in d else '')
" || tail -3 $OUT/$f.txt; done
grep matmul $OUT/p-strict.txt | head; grep matmul $OUT/p-both.txt | head
grep arg_max $OUT/p-strict.txt
wait $BT && $B/test/dq_runtime_hip_tests --gtest_filter='HipKernels.*' > $OUT/hiptests.txt 2>&1; echo "hip tests rc=$?"; tail -5 $OUT/hiptests.txt
