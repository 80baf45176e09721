# Makefile - builds fdtune and the tests; `make check` runs the tests plainly and again
# under AddressSanitizer + UndefinedBehaviorSanitizer; `make run` runs the main job.
#
#   make STATIC=1    links libuv, msgpack-c and libelf statically, for GPU hosts that lack
#                    them (the binaries still load the GPU libraries with dlopen)
#   make SAN=1       the sanitizer build, in build-san/
# STATIC builds go to build-static/.

CC ?= cc
SAN ?= 0
STATIC ?= 0

ifeq ($(STATIC),1)
BUILD := build-static
else ifeq ($(SAN),1)
BUILD := build-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else
BUILD := build
SANFLAGS :=
endif

CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fopenmp $(SANFLAGS)
CPPFLAGS += -Ituner -Icli
LDFLAGS += -fopenmp $(SANFLAGS)
ifeq ($(STATIC),1)
LDLIBS := -Wl,-Bstatic -luv_a -lmsgpackc -lelf -lz -Wl,-Bdynamic -l:libzstd.so.1 -lpthread -ldl -lm
else
LDLIBS := -luv -lmsgpackc -lelf -ldl -lm
endif

KERNELS := naive tiled zmarch smem broken compare
TUNER := backend backend_hip backend_cuda backend_cpu amdgpu_codeobj variant measure \
         runner compile_pool bench
TUNER_OBJS := $(TUNER:%=$(BUILD)/tuner/%.o) $(BUILD)/kernel_sources.o
CLI_OBJS := $(BUILD)/cli/fdtune.o $(BUILD)/cli/cmd_bench.o
TESTS := test_variant test_hip_compile test_hip_variants test_cpu_backend

.PHONY: all check test run clean
all: $(BUILD)/fdtune

$(BUILD)/fdtune: $(CLI_OBJS) $(TUNER_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c $(wildcard tuner/*.h cli/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# Each kernel family's source, common.h prepended, as a C string, so that one binary
# carries its kernels wherever it is copied.
$(BUILD)/kernel_sources.c: kernels_src/common.h $(KERNELS:%=kernels_src/%.hip)
	@mkdir -p $(dir $@)
	@{ echo "/* generated from kernels_src/ by the Makefile; do not edit */"; \
	  for k in $(KERNELS); do \
	    echo "const char fdt_kernel_source_$$k[] ="; \
	    cat kernels_src/common.h kernels_src/$$k.hip | \
	      sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/'; \
	    echo "    ;"; \
	  done; } > $@

$(BUILD)/kernel_sources.o: $(BUILD)/kernel_sources.c
	$(CC) $(CFLAGS) -Wno-overlength-strings -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(TUNER_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)

# Sanitizer settings for third-party code, leak checking left on: LeakSanitizer's tracer
# crashes at exit on the thread-local storage of an OpenMP runtime loaded with dlopen (the
# cpu backend's kernels); hiprtc's LLVM replaces a thread's alternate signal stack, which
# AddressSanitizer then fails to unmap when a compile thread exits; tests/lsan.supp lists
# what hiprtc keeps allocated.
test: export LSAN_OPTIONS = intercept_tls_get_addr=0:suppressions=$(CURDIR)/tests/lsan.supp
test: export ASAN_OPTIONS = use_sigaltstack=0
test: $(TESTS:%=$(BUILD)/tests/%) $(BUILD)/fdtune
	@set -e; for t in $(TESTS); do echo "== $$t"; FDTUNE_REPORT_DIR=$(BUILD) $(BUILD)/tests/$$t; done
	@FDTUNE=$(BUILD)/fdtune sh tests/test_cli.sh

check:
	$(MAKE) test
	$(MAKE) SAN=1 test

run: $(BUILD)/fdtune
	$(BUILD)/fdtune bench 128 128 128 --top 10

clean:
	rm -rf build build-san build-static
