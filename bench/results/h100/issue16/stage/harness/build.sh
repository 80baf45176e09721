# temporary: builds perf binaries for stage knobs
set -e
cd "$(dirname "$0")"
mk() { # name real R bx by m mz ahead bulk lb nx ny nz
  sed -e "s/^#define AHEAD 2 .*/#define AHEAD $8/" kernels.cu > src_$1.cu
  if [ "$9" = 0 ]; then sed -i 's/^#define BULK 1$/#define BULK 0/' src_$1.cu; fi
  sed "s/src.cu/src_$1.cu/" perf.cu > perf_$1.cu
  /usr/local/cuda/bin/nvcc -arch=sm_90 -O3 -o perf_$1 perf_$1.cu -DFDT_REAL=$2 -DFDT_RADIUS=$3 -DFDT_BX=$4 -DFDT_BY=$5 -DFDT_BZ=1 -DFDT_M=$6 -DFDT_MZ=$7 -DFDT_IDX=int -DFDT_LB=${10} -DFDT_NT=0 -DFDT_MAP=0 -DFDT_BAND=0 -DNX=${11} -DNY=${12} -DNZ=${13} -DNAME="\"$1\"" &
}
cat ../kernels_src/common.h ../kernels_src/stage.hip > kernels.cu
for shape in "512 512 512" "1024 1024 64"; do set -- $shape; s=${1}x${2}x${3}
  for a in 2 3; do
    mk ${s}_32x8m2_a${a}_b0_lb double 1 32 8 2 32 $a 0 1 $1 $2 $3
    mk ${s}_64x4m2_a${a}_b0_lb double 1 64 4 2 32 $a 0 1 $1 $2 $3
    mk ${s}_32x4m2_a${a}_b0_lb double 1 32 4 2 32 $a 0 1 $1 $2 $3
    mk ${s}_16x16m2_a${a}_b0_lb double 1 16 16 2 32 $a 0 1 $1 $2 $3
    mk ${s}_32x8m1_a${a}_b0 double 1 32 8 1 16 $a 0 0 $1 $2 $3
  done
  mk ${s}_32x8m2_a2_b1_lb double 1 32 8 2 32 2 1 1 $1 $2 $3
  mk ${s}_32x8m2_a2_b0_lb_mz16 double 1 32 8 2 16 2 0 1 $1 $2 $3
  mk ${s}_32x8m2_a2_b0_lb_mz64 double 1 32 8 2 64 2 0 1 $1 $2 $3
  wait
done
for b in "32 8" "16 16" "32 4" "16 8"; do set -- $b
  mk 512x512x512f_$1x$2m2_a2_b0_lb float 1 $1 $2 2 32 2 0 1 512 512 512
done
wait
