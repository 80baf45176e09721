set -x
git rev-parse HEAD > $OUT/commit.txt 2>/dev/null; echo "4618317 + xypipe (uncommitted)" >> $OUT/commit.txt
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
for shape in "512 512 512" "1024 1024 64"; do
  n=$(echo $shape | tr ' ' x)
  ./build-static/fdtune bench $shape --family xypipe --top 8 --samples 9 > $OUT/a1_$n.txt 2>&1
  ./build-static/a2/fdtune bench $shape --family xypipe --top 8 --samples 9 > $OUT/a2_$n.txt 2>&1
done
./build-static/fdtune bench 512 512 512 --variant xytile:32x4x1:m2:mz8:lb > $OUT/ref_512.txt 2>&1
./build-static/fdtune bench 1024 1024 64 --variant xytile:64x4x1:m4:mz64:lb > $OUT/ref_1024.txt 2>&1
tail -n 30 $OUT/*.txt
