# Makefile - builds fdtuned, fdtune-worker, fdtune, libfdtune and the tests; `make check`
# runs the tests plainly and again under AddressSanitizer + UndefinedBehaviorSanitizer;
# `make run` runs the main job.
#
#   make STATIC=1    links libuv, msgpack-c and libelf statically, for GPU hosts that lack
#                    them (the binaries still load the GPU libraries with dlopen)
#   make SAN=1       the sanitizer build, in build-san/
#   make fuzz        the libFuzzer target over the request path (tests/fuzz/), built with clang
#                    under ASan + UBSan in build/fuzz/, run for FUZZ_SECONDS (default 600);
#                    `make check` runs it for CHECK_FUZZ_SECONDS (60)
# STATIC builds go to build-static/.

CC ?= cc
SAN ?= 0
STATIC ?= 0
FUZZ ?= 0
FUZZ_SECONDS ?= 600
CHECK_FUZZ_SECONDS ?= 60

ifeq ($(FUZZ),1)
# Inside build/ so that `make clean` and .gitignore cover it; every object is rebuilt with
# clang, whose libFuzzer instruments the code it measures coverage on.
BUILD := build/fuzz
override CC := clang
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
            -fno-omit-frame-pointer
else ifeq ($(STATIC),1)
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
CPPFLAGS += -Ituner -Icli -Icli/include -Idb -Iconfig -Icommon
LDFLAGS += -fopenmp $(SANFLAGS)
# libsystemd and libsmartcols have no static library: a STATIC=1 build links them as any
# system has them (systemd's and util-linux's), and the rest statically.
ifeq ($(STATIC),1)
LDLIBS := -Wl,-Bstatic -lsqlite3 -ljansson -linih -luv_a -lmsgpackc -lelf -lcsv -lz -Wl,-Bdynamic \
          -l:libzstd.so.1 -lsystemd -lsmartcols -lpthread -ldl -lm
else
LDLIBS := -lsqlite3 -ljansson -linih -luv -lmsgpackc -lelf -lcsv -lz -lsystemd -lsmartcols -ldl -lm
endif

# The example stencil specs (examples/specs/, docs/stencils.md), installed with the examples.
SPECS := laplacian_r1 anisotropic div_k_grad acoustic8 gradient4 box27
KERNELS := naive tiled zmarch zvec zroll smem xytile ring snaive smarch szwin svec stile broken hazard \
           compare persist \
           copy l2read
# The store's schema (version 1) and its migrations, in order.
SQL := schema migrate_2 migrate_3 migrate_4 migrate_5 migrate_6 migrate_7 migrate_8 migrate_9 \
       migrate_10 migrate_11 migrate_12 migrate_13
STORE := store store_devices store_jobs store_results store_code store_stencils
# What every program shares: the vocabulary and helpers of every part (common/), the
# backends, the tuning engine (tuner/engine/, the worker's main aside), the store and the
# settings.
COMMON := util device problem hashes frame jsonl csvout export_format import_file
BACKENDS := backend hip cuda cpu amdgpu_codeobj amdgpu_archs
ENGINE := variant stencil spec spec_code sources measure runner compile_pool compile_helper \
          session bench wire balance
# The search strategies and the replay backend they are compared on.
SEARCH := search exhaustive random guided replay
CORE_OBJS := $(COMMON:%=$(BUILD)/common/%.o) $(BACKENDS:%=$(BUILD)/tuner/backends/%.o) $(ENGINE:%=$(BUILD)/tuner/engine/%.o) \
             $(SEARCH:%=$(BUILD)/tuner/search/%.o) \
             $(BUILD)/kernel_sources.o $(STORE:%=$(BUILD)/db/%.o) $(SQL:%=$(BUILD)/db/%_sql.o) \
             $(BUILD)/config/config.o $(BUILD)/config/paths.o
# The daemon's parts; its main is tuner/daemon/fdtuned.c.
DAEMON := log notify server ops export import site query job_search scheduler supervisor balance doubt
DAEMON_OBJS := $(DAEMON:%=$(BUILD)/tuner/daemon/%.o)
# libfdtune: the client library solvers link: the client, the kernel API and its module
# cache, and the parts of the tuner they run on (the backends, the variants, the hashes,
# the figure of merit, the kernel sources), from position-independent objects of its own.
LIB_PARTS := cli/client cli/kernel cli/module_cache config/paths $(BACKENDS:%=tuner/backends/%) \
             common/util common/device common/problem common/hashes \
             tuner/engine/variant tuner/engine/stencil tuner/engine/spec tuner/engine/spec_code \
             tuner/engine/sources tuner/engine/measure
LIB_PIC := $(LIB_PARTS:%=$(BUILD)/pic/%.o) $(BUILD)/pic/kernel_sources.o
LIB_LIBS := -ljansson -lelf -lmsgpackc -ldl -lpthread -lm
LIB_HEADERS := cli/include/fdtune.h cli/include/fdtune_kernel.h
# The soname's number grows whenever a solver built against the last one could not run
# with this one (cli/include/fdtune.h says what changed): 2, the layout in fdtune_problem
# and fdtune_answer.
SONAME := libfdtune.so.2
# The modules libfdtune caches on disk depend on its own code too (compile options, the cpu
# backend's launcher): a checksum of its sources goes into their keys, so that a module
# made by another build of the library is never loaded.
LIB_SOURCES_SUM := $(shell cat $(LIB_PARTS:%=%.c) $(wildcard tuner/backends/*.h common/*.h) | cksum | cut -d' ' -f1)
VERSION := $(shell sed -n 's/^\#define FDT_VERSION "\(.*\)"/\1/p' common/version.h)
ifeq ($(origin FC),default)
FC := gfortran
endif
OBJCOPY ?= objcopy
FFLAGS ?= -O2 -g
CLI_OBJS := $(BUILD)/cli/fdtune.o $(BUILD)/cli/progress.o $(BUILD)/cli/args.o $(BUILD)/cli/table.o \
            $(BUILD)/cli/report.o $(BUILD)/cli/plot.o $(BUILD)/cli/html.o \
            $(patsubst %.c,$(BUILD)/%.o,$(wildcard cli/cmd_*.c))
TESTS := test_variant test_hip_compile test_hip_variants test_cpu_backend test_store \
         test_config test_wire test_query test_protocol test_search test_kernel test_compile_helper \
         test_states test_spec fortran_layout
# hiprtc compiling every family for two AMD targets takes a third of a pass and runs none
# of our code that test_hip_compile does not: the sanitizer pass leaves it to the plain one.
ifeq ($(SAN),1)
RUN_TESTS := $(filter-out test_hip_variants,$(TESTS))
else
RUN_TESTS := $(TESTS)
endif
PROGRAMS := $(BUILD)/fdtuned $(BUILD)/fdtune-worker $(BUILD)/fdtune
# fdtune-slurm: a shell script, with the version filled in; beside fdtune in the build tree
# as in an installed one, since it looks for fdtune and fdtuned in its own directory first.
SCRIPTS := $(BUILD)/fdtune-slurm
HEADERS := $(wildcard common/*.h tuner/*/*.h cli/*.h cli/include/*.h db/*.h config/*.h)

.PHONY: all check test fuzz run clean install uninstall hip-nvidia
# The manual: fdtune(1), fdtune-slurm(1), fdtuned(8) and libfdtune(3) written in docs/man/
# with the version filled in; fdtuned.conf(5) made from config/fdtuned.conf, where every
# key is documented.
MAN_PAGES := fdtune.1 fdtune-slurm.1 fdtuned.8 libfdtune.3 fdtuned.conf.5

all: $(PROGRAMS) $(SCRIPTS) $(BUILD)/libfdtune.a $(BUILD)/libfdtune.so $(BUILD)/fdtune.pc \
     $(BUILD)/examples/heat $(BUILD)/examples/heat_f $(BUILD)/examples/wave \
     $(BUILD)/examples/wave_f $(MAN_PAGES:%=$(BUILD)/man/%)

$(BUILD)/man/%: docs/man/% common/version.h
	@mkdir -p $(@D)
	sed 's|@VERSION@|$(VERSION)|' $< > $@
$(BUILD)/man/fdtuned.conf.5: config/fdtuned.conf scripts/conf2man.awk common/version.h
	@mkdir -p $(@D)
	awk -v version=$(VERSION) -f scripts/conf2man.awk $< > $@

$(BUILD)/fdtune-slurm: cli/fdtune-slurm common/version.h
	@mkdir -p $(@D)
	sed 's|@VERSION@|$(VERSION)|' $< > $@.tmp && chmod 755 $@.tmp && mv -f $@.tmp $@

$(BUILD)/fdtuned: $(BUILD)/tuner/daemon/fdtuned.o $(DAEMON_OBJS) $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/fdtune-worker: $(BUILD)/tuner/engine/worker.o $(CORE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/fdtune: $(CLI_OBJS) $(CORE_OBJS) $(BUILD)/cli/client.o
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# One relocatable object whose only global symbols are fdtune_*, so that the library's
# internals (fdt_*, the backends) can never clash with a solver's own symbols.
$(BUILD)/libfdtune.a: $(LIB_PIC)
	$(LD) -r -o $(BUILD)/pic/libfdtune.o $^
	$(OBJCOPY) -w --keep-global-symbol='fdtune_*' $(BUILD)/pic/libfdtune.o
	rm -f $@ && ar rcs $@ $(BUILD)/pic/libfdtune.o

# Programs linked with -lfdtune record its soname, $(SONAME), so that file must exist;
# cli/libfdtune.map exports fdtune_* alone.
$(BUILD)/libfdtune.so: $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

$(BUILD)/$(SONAME): $(LIB_PIC) cli/libfdtune.map
	$(CC) -shared $(SANFLAGS) -Wl,-soname,$(SONAME) -Wl,--version-script=cli/libfdtune.map \
	  -Wl,--no-undefined -o $@ $(LIB_PIC) $(LIB_LIBS)

LIB_KEYED := $(BUILD)/cli/kernel.o $(BUILD)/pic/cli/kernel.o
$(LIB_KEYED): CPPFLAGS += -DFDT_LIBRARY_SOURCES='"$(LIB_SOURCES_SUM)"'
$(LIB_KEYED): $(LIB_PARTS:%=%.c)

$(BUILD)/pic/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/pic/kernel_sources.o: $(BUILD)/kernel_sources.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -Wno-overlength-strings -c -o $@ $<

# The build tree is laid out as an installed one, so that the examples build the way a
# solver does: through pkg-config alone.
$(BUILD)/include/%.h: cli/include/%.h
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/include/fdtune.mod: cli/fortran/fdtune.f90
	@mkdir -p $(BUILD)/include $(BUILD)/fortran
	$(FC) $(FFLAGS) -std=f2008 -Wall -Werror -J $(BUILD)/include -c -o $(BUILD)/fortran/fdtune.o $<

$(BUILD)/fdtune.pc: cli/fdtune.pc.in
	sed -e 's|@PREFIX@|$(CURDIR)/$(BUILD)|' -e 's|@LIBDIR@|$${prefix}|' \
	    -e 's|@INCLUDEDIR@|$${prefix}/include|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@RPATH@|-Wl,-rpath,$${libdir} |' $< > $@

BUILT_LIB := $(BUILD)/libfdtune.a $(BUILD)/libfdtune.so $(BUILD)/fdtune.pc \
             $(LIB_HEADERS:cli/include/%=$(BUILD)/include/%)
PKG := PKG_CONFIG_PATH=$(CURDIR)/$(BUILD) pkg-config
# A GPU host without jansson and libelf (STATIC=1) gets the solver linked statically.
ifeq ($(STATIC),1)
EXAMPLE_FLAGS := -I$(BUILD)/include $(BUILD)/libfdtune.a $(LDLIBS)
else
EXAMPLE_FLAGS = $$($(PKG) --cflags --libs fdtune)
endif

$(BUILD)/examples/heat: examples/heat.c $(BUILT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(EXAMPLE_FLAGS) -lm

# The wave solver reads its spec from the source tree's copy unless told (--spec).
$(BUILD)/examples/wave: examples/wave.c $(BUILT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DWAVE_SPEC='"$(CURDIR)/examples/specs/acoustic8.json"' -o $@ $< \
	  $(EXAMPLE_FLAGS) -lm

$(BUILD)/examples/heat_f: examples/heat.f90 $(BUILT_LIB) $(BUILD)/include/fdtune.mod
	@mkdir -p $(dir $@)
	$(FC) $(FFLAGS) $(SANFLAGS) -std=f2008 -Wall -Werror -o $@ $< $$($(PKG) --cflags --libs fdtune)

# As wave's; its default spec goes through the preprocessor (-cpp), the line it lands on
# unbounded, whatever the checkout's path.
$(BUILD)/examples/wave_f: examples/wave.f90 $(BUILT_LIB) $(BUILD)/include/fdtune.mod
	@mkdir -p $(dir $@)
	$(FC) $(FFLAGS) $(SANFLAGS) -std=f2008 -Wall -Werror -cpp -ffree-line-length-none \
	  -DWAVE_SPEC='"$(CURDIR)/examples/specs/acoustic8.json"' -o $@ $< \
	  $$($(PKG) --cflags --libs fdtune)

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
$(BUILD)/tests/test_states: $(DAEMON_OBJS)

$(BUILD)/tests/%: tests/%.c $(CORE_OBJS) $(BUILD)/cli/client.o
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)

# libfdtune's kernel API, tested on the objects the library is made of.
$(BUILD)/tests/test_kernel: $(BUILD)/cli/kernel.o $(BUILD)/cli/module_cache.o

# The Fortran module's types against the C structs they bind.
$(BUILD)/tests/fortran_layout: tests/fortran_layout.f90 tests/fortran_layout.c $(BUILD)/include/fdtune.mod
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Icli/include -c -o $@_c.o tests/fortran_layout.c
	$(FC) $(FFLAGS) $(SANFLAGS) -std=f2008 -Wall -Werror -I$(BUILD)/include -o $@ $< $@_c.o

# Sanitizer settings for third-party code, leak checking left on: LeakSanitizer's tracer
# crashes at exit on the thread-local storage of an OpenMP runtime loaded with dlopen (the
# cpu backend's kernels); hiprtc's LLVM replaces a thread's alternate signal stack, which
# AddressSanitizer then fails to unmap when a compile thread exits; tests/lsan.supp lists
# what hiprtc keeps allocated.
# Every test is a target of its own, and `make test` runs them side by side, TEST_JOBS at a
# time: each makes its own temporary directory, socket and store, so none waits on another.
# tests/run_test.sh keeps a test's output in $(BUILD)/test-logs/ and prints it whole when the
# test ends, and runs it at nice 19, the level of the workers the daemons under test spawn,
# so that no test's compiles starve another test's workers. The longest come first, so that
# the short ones fill in beside them; a test that fails lets the others run on (-k), so that
# one run shows every failure. test_noisy.sh needs the host to itself (its subject is
# a busy host, of its own making): it runs alone, once the others are done.
SH_TESTS := daemon cli install heal watchdog security client_trust export devices replay balance \
            specs watch service report import slurm
LONGEST := test-c-test_hip_variants test-sh-daemon test-c-test_cpu_backend test-sh-cli \
           test-sh-install test-c-test_protocol test-sh-heal test-sh-watchdog
TEST_JOBS ?= $(shell nproc)
# MAKE=make, not $(MAKE): GNU make hands its jobserver's descriptors to a recipe that names
# $(MAKE), and a test has no use for them (tests/run_test.sh fails one that leaves a process
# behind, since such a process holding them kept make waiting for ever).
RUN_TEST = BUILD=$(BUILD) FDT_BUILD=$(BUILD) FDTUNE=$(BUILD)/fdtune FDTUNE_REPORT_DIR=$(BUILD) \
           SANFLAGS="$(SANFLAGS)" MAKE=make sh tests/run_test.sh $(BUILD)/test-logs
ALL_TESTS := $(RUN_TESTS:%=test-c-%) $(SH_TESTS:%=test-sh-%) test-layers
TEST_TARGETS := $(foreach t,$(LONGEST),$(filter $(t),$(ALL_TESTS))) $(filter-out $(LONGEST),$(ALL_TESTS))
.PHONY: side-by-side $(TEST_TARGETS)

test: export LSAN_OPTIONS = intercept_tls_get_addr=0:suppressions=$(CURDIR)/tests/lsan.supp
test: export ASAN_OPTIONS = use_sigaltstack=0
test: $(RUN_TESTS:%=$(BUILD)/tests/%) all
	@$(MAKE) --no-print-directory -k -j$(TEST_JOBS) side-by-side
	@$(RUN_TEST) test_noisy sh tests/test_noisy.sh

side-by-side: $(TEST_TARGETS)
$(RUN_TESTS:%=test-c-%): test-c-%:
	@$(RUN_TEST) $* $(BUILD)/tests/$*
$(SH_TESTS:%=test-sh-%): test-sh-%:
	@$(RUN_TEST) test_$* sh tests/test_$*.sh
test-layers:
	@$(RUN_TEST) test_layers sh tests/test_layers.sh

check:
	$(MAKE) -j$(TEST_JOBS) test
	$(MAKE) -j$(TEST_JOBS) SAN=1 test
	$(MAKE) fuzz FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS)

ifeq ($(FUZZ),1)
FUZZ_TARGET := $(BUILD)/fuzz_requests
# The fuzz target links the daemon's parts but its main, and reaches them through the
# server's own socket; the linker hands it the worker supervision's start (a fuzzer must
# not fork workers) and the daemon's log (which would bury libFuzzer's report); see
# tests/fuzz/fuzz_requests.c.
FUZZ_WRAPS := -Wl,--wrap=fdt_worker_start -Wl,--wrap=fdt_log -Wl,--wrap=fdt_log_at
$(FUZZ_TARGET): tests/fuzz/fuzz_requests.c $(DAEMON_OBJS) $(CORE_OBJS)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fsanitize=fuzzer $(LDFLAGS) $(FUZZ_WRAPS) -o $@ $^ $(LDLIBS)

# New inputs go to $(BUILD)/corpus, the first directory, and findings to $(BUILD)/; the
# seeds in tests/fuzz/corpus are read, never written. A finding fails the target, and so
# does an input answered in more than 10 s: a request that hangs the daemon.
fuzz: $(FUZZ_TARGET)
	@mkdir -p $(BUILD)/corpus
	$(FUZZ_TARGET) -max_total_time=$(FUZZ_SECONDS) -timeout=10 -dict=tests/fuzz/requests.dict \
	  -artifact_prefix=$(BUILD)/ -print_final_stats=1 $(BUILD)/corpus tests/fuzz/corpus
else
# The FUZZ=1 build, in fuzz/ under this build's folder (build/fuzz/), builds and runs it;
# `make FUZZ=1 BUILD=DIR fuzz` puts it in DIR instead.
fuzz:
	$(MAKE) FUZZ=1 BUILD=$(BUILD)/fuzz fuzz
endif

# make hip-nvidia: the test-only HIP platform for NVIDIA GPUs (tests/hip_nvidia/), built
# where CUDA is installed, never by all or install: $(BUILD)/hip-nvidia/libamdhip64.so,
# exporting exactly the HIP runtime and hiprtc functions hip.c looks up (its API list, read
# from the source), checked after the link. LD_LIBRARY_PATH=$(BUILD)/hip-nvidia puts it in
# front of any ROCm; the hip backend then runs on the NVIDIA GPU (bench/hip_nvidia.sh).
CUDA_HOME ?= /usr/local/cuda
HIPNV := $(BUILD)/hip-nvidia
HIPNV_API = grep -o 'X(\(RUNTIME\|RTC\), [A-Za-z0-9_]*)' tuner/backends/hip.c | sed 's/.*, //; s/)//' | sort

hip-nvidia: $(HIPNV)/libamdhip64.so

$(HIPNV)/exports.map: tuner/backends/hip.c
	@mkdir -p $(@D)
	{ echo '{ global:'; $(HIPNV_API) | sed 's/$$/;/'; echo 'local: *; };'; } >$@

$(HIPNV)/libamdhip64.so: tests/hip_nvidia/hip_nvidia.c $(HIPNV)/exports.map
	gcc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I$(CUDA_HOME)/include $< -o $@ \
	  -Wl,--version-script=$(HIPNV)/exports.map -Wl,-soname,libamdhip64.so \
	  -L$(CUDA_HOME)/lib64/stubs -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 \
	  -lcuda -lnvrtc -lpthread
	nm -D --defined-only $@ | awk '{print $$3}' | sort >$(HIPNV)/exported
	$(HIPNV_API) | diff $(HIPNV)/exported - || \
	  { echo "$@ must export exactly hip.c's API list" >&2; rm -f $@; exit 1; }

# make install / uninstall: PREFIX (default /usr/local), DESTDIR (a staging root). The
# daemon finds its worker in libexec; the settings go where fdtuned reads them (/etc) for
# the system prefixes, under PREFIX for others (a user's ~/.local), and an existing
# fdtuned.conf is left as the administrator made it.
PREFIX ?= /usr/local
SYSCONFDIR ?= $(if $(filter /usr /usr/local,$(PREFIX)),/etc,$(PREFIX)/etc)
BINDIR := $(PREFIX)/bin
LIBDIR := $(PREFIX)/lib
INCLUDEDIR := $(PREFIX)/include
LIBEXECDIR := $(PREFIX)/libexec/fdtuned
DATADIR := $(PREFIX)/share/fdtuned
UNITDIR := $(PREFIX)/lib/systemd/system
SYSUSERSDIR := $(PREFIX)/lib/sysusers.d
MANDIR := $(PREFIX)/share/man
COMPLETIONSDIR := $(PREFIX)/share/bash-completion/completions
INSTALLED := $(BINDIR)/fdtuned $(BINDIR)/fdtune $(BINDIR)/fdtune-slurm $(LIBEXECDIR)/fdtune-worker \
             $(LIBDIR)/libfdtune.a $(LIBDIR)/$(SONAME) $(LIBDIR)/libfdtune.so \
             $(LIBDIR)/pkgconfig/fdtune.pc $(LIB_HEADERS:cli/include/%=$(INCLUDEDIR)/%) \
             $(INCLUDEDIR)/fdtune.mod $(DATADIR)/fortran/fdtune.f90 \
             $(DATADIR)/kernels/common.h $(KERNELS:%=$(DATADIR)/kernels/%.hip) \
             $(DATADIR)/examples/heat.c $(DATADIR)/examples/heat.f90 \
             $(DATADIR)/examples/wave.c $(DATADIR)/examples/wave.f90 \
             $(SPECS:%=$(DATADIR)/examples/specs/%.json) \
             $(DATADIR)/fdtuned.conf $(UNITDIR)/fdtuned.service $(SYSUSERSDIR)/fdtuned.conf \
             $(foreach p,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(p)) \
             $(COMPLETIONSDIR)/fdtune

install: all $(BUILD)/include/fdtune.mod
	install -d $(addprefix $(DESTDIR),$(BINDIR) $(LIBEXECDIR) $(LIBDIR)/pkgconfig \
	  $(INCLUDEDIR) $(DATADIR)/kernels $(DATADIR)/fortran $(DATADIR)/examples \
	  $(DATADIR)/examples/specs $(UNITDIR) $(SYSUSERSDIR) $(COMPLETIONSDIR) \
	  $(foreach s,1 3 5 8,$(MANDIR)/man$(s)) \
	  $(SYSCONFDIR)/fdtuned)
	install -m 755 $(BUILD)/fdtuned $(BUILD)/fdtune $(BUILD)/fdtune-slurm $(DESTDIR)$(BINDIR)
	install -m 755 $(BUILD)/fdtune-worker $(DESTDIR)$(LIBEXECDIR)
	install -m 644 $(BUILD)/libfdtune.a $(DESTDIR)$(LIBDIR)
	install -m 755 $(BUILD)/$(SONAME) $(DESTDIR)$(LIBDIR)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libfdtune.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	  -e 's|@VERSION@|$(VERSION)|' -e 's|@RPATH@||' cli/fdtune.pc.in \
	  > $(DESTDIR)$(LIBDIR)/pkgconfig/fdtune.pc
	install -m 644 $(LIB_HEADERS) $(BUILD)/include/fdtune.mod $(DESTDIR)$(INCLUDEDIR)
	install -m 644 cli/fortran/fdtune.f90 $(DESTDIR)$(DATADIR)/fortran
	install -m 644 kernels_src/common.h $(KERNELS:%=kernels_src/%.hip) $(DESTDIR)$(DATADIR)/kernels
	install -m 644 examples/heat.c examples/heat.f90 examples/wave.c examples/wave.f90 \
	  $(DESTDIR)$(DATADIR)/examples
	install -m 644 $(SPECS:%=examples/specs/%.json) $(DESTDIR)$(DATADIR)/examples/specs
	install -m 644 config/fdtuned.conf $(DESTDIR)$(DATADIR)
	[ -e $(DESTDIR)$(SYSCONFDIR)/fdtuned/fdtuned.conf ] || \
	  install -m 644 config/fdtuned.conf $(DESTDIR)$(SYSCONFDIR)/fdtuned
	sed -e 's|@BINDIR@|$(BINDIR)|' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|' config/fdtuned.service \
	  > $(DESTDIR)$(UNITDIR)/fdtuned.service
	install -m 644 config/fdtuned.sysusers $(DESTDIR)$(SYSUSERSDIR)/fdtuned.conf
	for p in $(MAN_PAGES); do \
	  install -m 644 $(BUILD)/man/$$p $(DESTDIR)$(MANDIR)/man$${p##*.}/$$p || exit 1; done
	install -m 644 completions/fdtune.bash $(DESTDIR)$(COMPLETIONSDIR)/fdtune

# The settings file stays if the administrator changed it from the one installed.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	cmp -s config/fdtuned.conf $(DESTDIR)$(SYSCONFDIR)/fdtuned/fdtuned.conf && \
	  rm -f $(DESTDIR)$(SYSCONFDIR)/fdtuned/fdtuned.conf || true
	-rmdir $(addprefix $(DESTDIR),$(DATADIR)/kernels $(DATADIR)/fortran $(DATADIR)/examples \
	  $(DATADIR) $(LIBEXECDIR) $(SYSCONFDIR)/fdtuned) 2>/dev/null

# The main job: the daemon with its embedded defaults, in the foreground.
run: all
	$(BUILD)/fdtuned

clean:
	rm -rf build build-san build-static
