# temporary: xytile with one point a thread (x1) against a 16-byte vector (xv), nvcc-built
set -e
cd "$(dirname "$0")"
cat ../kernels_src/common.h ../kernels_src/xytile.hip > xv.cu
sed -e 's|^#define LANES ((int)(16 / sizeof(real)))|#define LANES 1|' -e 's|^typedef vector_of<sizeof(real)>::type vec_t;|typedef real vec_t;|' ../kernels_src/common.h > c1.h
cat c1.h ../kernels_src/xytile.hip > x1.cu
mk() { # name src real R bx by m nx ny nz
  sed "s/src.cu/$2/" perf.cu > perf_$1.cu
  /usr/local/cuda/bin/nvcc -arch=sm_90 -O3 -o perf_$1 perf_$1.cu -DFDT_REAL=$3 -DFDT_RADIUS=$4 -DFDT_BX=$5 -DFDT_BY=$6 -DFDT_BZ=1 -DFDT_M=$7 -DFDT_MZ=32 -DFDT_IDX=int -DFDT_LB=1 -DFDT_NT=0 -DFDT_MAP=0 -DFDT_BAND=0 -DFDT_BUG=0 -DNX=$8 -DNY=$9 -DNZ=${10} -DNAME="\"$1\"" 2>&1 | grep -i "error" || true &
}
for v in "32 4 4" "32 8 4" "32 8 2" "16 4 4" "16 8 2"; do set -- $v
  mk r4d_xv_$1x$2m$3 xv.cu double 4 $1 $2 $3 512 512 512
  mk r4f_xv_$1x$2m$3 xv.cu float 4 $1 $2 $3 512 512 512
done
for v in "64 4 4" "64 8 4" "64 8 2" "32 8 4" "128 4 2" "64 4 2" "32 16 2"; do set -- $v
  mk r4d_x1_$1x$2m$3 x1.cu double 4 $1 $2 $3 512 512 512
  mk r4f_x1_$1x$2m$3 x1.cu float 4 $1 $2 $3 512 512 512
done
wait
for v in "64 4 4" "64 4 2" "32 8 4"; do set -- $v; mk r1d_xv_$1x$2m$3 xv.cu double 1 $1 $2 $3 1024 1024 64; done
for v in "128 4 4" "128 4 2" "64 8 4" "128 8 2"; do set -- $v; mk r1d_x1_$1x$2m$3 x1.cu double 1 $1 $2 $3 1024 1024 64; done
wait
