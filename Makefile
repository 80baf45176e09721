# Makefile - builds fdtuned, fdtune-worker, fdtune, libfdtune and the tests; `make check`
# runs the tests plainly and again under AddressSanitizer + UndefinedBehaviorSanitizer;
# `make run` runs the main job.
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
CPPFLAGS += -Ituner -Icli -Icli/include -Idb -Iconfig
LDFLAGS += -fopenmp $(SANFLAGS)
ifeq ($(STATIC),1)
LDLIBS := -Wl,-Bstatic -lsqlite3 -ljansson -linih -luv_a -lmsgpackc -lelf -lcsv -lz -Wl,-Bdynamic \
          -l:libzstd.so.1 -lpthread -ldl -lm
else
LDLIBS := -lsqlite3 -ljansson -linih -luv -lmsgpackc -lelf -lcsv -lz -ldl -lm
endif

KERNELS := naive tiled zmarch zvec smem broken hazard compare persist
# The store's schema (version 1) and its migrations, in order.
SQL := schema migrate_2 migrate_3
STORE := store store_devices store_jobs store_results store_code
# What every program shares: the backends, the tuning engine (tuner/engine/, the worker's
# main aside), the store and the settings.
BACKENDS := backend hip cuda cpu amdgpu_codeobj
ENGINE := variant measure runner compile_pool session bench hashes wire jsonl base64
# The search strategies and the replay backend they are compared on.
SEARCH := search exhaustive random guided replay
CORE_OBJS := $(BACKENDS:%=$(BUILD)/tuner/backends/%.o) $(ENGINE:%=$(BUILD)/tuner/engine/%.o) \
             $(SEARCH:%=$(BUILD)/tuner/search/%.o) \
             $(BUILD)/kernel_sources.o $(STORE:%=$(BUILD)/db/%.o) $(SQL:%=$(BUILD)/db/%_sql.o) \
             $(BUILD)/config/config.o $(BUILD)/config/paths.o
# The daemon's parts; its main is tuner/daemon/fdtuned.c.
DAEMON := log server ops export query job_search scheduler supervisor
DAEMON_OBJS := $(DAEMON:%=$(BUILD)/tuner/daemon/%.o)
# libfdtune: the client library solvers link.
LIB_OBJS := $(BUILD)/cli/client.o $(BUILD)/config/paths.o
CLI_OBJS := $(BUILD)/cli/fdtune.o $(patsubst %.c,$(BUILD)/%.o,$(wildcard cli/cmd_*.c))
TESTS := test_variant test_hip_compile test_hip_variants test_cpu_backend test_store \
         test_config test_wire test_query test_protocol test_search
PROGRAMS := $(BUILD)/fdtuned $(BUILD)/fdtune-worker $(BUILD)/fdtune
HEADERS := $(wildcard tuner/*/*.h cli/*.h cli/include/*.h db/*.h config/*.h)

.PHONY: all check test run clean
all: $(PROGRAMS) $(BUILD)/libfdtune.a $(BUILD)/libfdtune.so $(BUILD)/fdtune.pc \
     $(BUILD)/example_query

$(BUILD)/fdtuned: $(BUILD)/tuner/daemon/fdtuned.o $(DAEMON_OBJS) $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/fdtune-worker: $(BUILD)/tuner/engine/worker.o $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/fdtune: $(CLI_OBJS) $(CORE_OBJS) $(BUILD)/cli/client.o
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libfdtune.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

# The shared library is built from position-independent objects of its own; programs
# linked with -lfdtune record its soname, libfdtune.so.1, so that file must exist.
$(BUILD)/libfdtune.so: $(BUILD)/libfdtune.so.1
	ln -sf libfdtune.so.1 $@

$(BUILD)/libfdtune.so.1: $(LIB_OBJS:$(BUILD)/%.o=$(BUILD)/pic/%.o)
	$(CC) -shared $(SANFLAGS) -Wl,-soname,libfdtune.so.1 -o $@ $^ -luv -ljansson

$(BUILD)/pic/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/fdtune.pc: cli/fdtune.pc.in
	sed -e 's|@PREFIX@|$(CURDIR)/$(BUILD)|' -e 's|@INCLUDEDIR@|$(CURDIR)/cli/include|' $< > $@

# The example is built the way a solver would build it: through pkg-config.
$(BUILD)/example_query: cli/example/query_launch.c $(BUILD)/libfdtune.a $(BUILD)/fdtune.pc
	$(CC) $(CFLAGS) -o $@ $< $$(PKG_CONFIG_PATH=$(BUILD) pkg-config --cflags --libs --static fdtune)

$(BUILD)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The query load generator of bench/query_bench.sh; a client of the socket, no core code.
$(BUILD)/querybench: bench/querybench.c
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

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

# The schema and its migrations, as C strings the store runs on open (fdt_schema_sql ...).
$(BUILD)/db/%_sql.c: db/%.sql
	@mkdir -p $(dir $@)
	@{ echo "/* generated from $< by the Makefile; do not edit */"; \
	  echo "const char fdt_$*_sql[] ="; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $<; \
	  echo "    ;"; } > $@

$(BUILD)/db/%_sql.o: $(BUILD)/db/%_sql.c
	$(CC) $(CFLAGS) -Wno-overlength-strings -c -o $@ $<

# The query's choices are tested apart from the daemon around them.
$(BUILD)/tests/test_query: $(BUILD)/tuner/daemon/query.o

$(BUILD)/tests/%: tests/%.c $(CORE_OBJS) $(BUILD)/cli/client.o
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)

# Sanitizer settings for third-party code, leak checking left on: LeakSanitizer's tracer
# crashes at exit on the thread-local storage of an OpenMP runtime loaded with dlopen (the
# cpu backend's kernels); hiprtc's LLVM replaces a thread's alternate signal stack, which
# AddressSanitizer then fails to unmap when a compile thread exits; tests/lsan.supp lists
# what hiprtc keeps allocated.
test: export LSAN_OPTIONS = intercept_tls_get_addr=0:suppressions=$(CURDIR)/tests/lsan.supp
test: export ASAN_OPTIONS = use_sigaltstack=0
test: $(TESTS:%=$(BUILD)/tests/%) all
	@sh tests/test_layers.sh
	@set -e; for t in $(TESTS); do echo "== $$t"; FDT_BUILD=$(BUILD) FDTUNE_REPORT_DIR=$(BUILD) $(BUILD)/tests/$$t; done
	@FDTUNE=$(BUILD)/fdtune sh tests/test_cli.sh
	@BUILD=$(BUILD) sh tests/test_daemon.sh

check:
	$(MAKE) test
	$(MAKE) SAN=1 test

# The main job: the daemon with its embedded defaults, in the foreground.
run: all
	$(BUILD)/fdtuned

clean:
	rm -rf build build-san build-static
