# ptimer: checkpoint/restore of Linux POSIX timers with exact IDs.
#
#   make deps     install missing build/test packages with apt-get (root)
#   make          build build/ptimer (the in-target restorer embedded) and
#                 build/ptimer_plugin.so
#   make check    every suite (test/run.sh): unit, end-to-end, the qemu
#                 kernel matrix, real criu 4.1.1/4.2.1/criu-dev, zdtm,
#                 containers, the fuzz corpus, ASan/UBSan builds; TAP-like
#                 lines, last "# N passed, N failed, N skipped"
#   make tests    the programs make check runs, built only
#   make asan     the unit and end-to-end programs with ASan and UBSan, in
#                 build-asan/ (and the fault-injection points of core/fault.h)
#   make fuzz     libFuzzer targets (test/fuzz/), each run FUZZ_SECONDS (30)
#   make fuzz-build   the libFuzzer targets, built only (make check replays
#                 their corpora)
#   make bench    benchmarks, printed as ratios from one run, written to
#                 docs/results.md
#   make demo     deps, build, dump a process with sparse timers, restore it
#   make install  build/ptimer, the plugin (criu's plugin directory) and the
#                 man page under DESTDIR/PREFIX (/usr/local)
#   make deb      build/ptimer_VERSION_ARCH.deb (packaging/mkdeb.sh)
#   make guest    what a qemu guest of the kernel matrix runs
#   make clean    remove build/ and build-asan/
#   make help     this list
#
# Architectures: ARCH=x86_64 or ARCH=arm64 (aarch64 also accepted), the
# host's by default.  ARCH other than the host's cross-builds into
# build-ARCH/ with CROSS_COMPILE (aarch64-linux-gnu- for arm64) and
# pkg-config on the target's multiarch directory:
#   make deps ARCH=arm64    cross toolchain and arm64 libraries (Debian)
#   make ARCH=arm64         build-arm64/ptimer, ptimer_plugin.so and the
#                           guest test programs (test/zdtm_timers, ...)

HOST_ARCH := $(shell uname -m | sed -e 's/^aarch64$$/arm64/' -e 's/^amd64$$/x86_64/')
ARCH    ?= $(HOST_ARCH)
override ARCH := $(patsubst aarch64,arm64,$(patsubst amd64,x86_64,$(ARCH)))
# restorer/arch/ARCH_DIR: the in-target code of the architecture
ARCH_DIR := $(if $(filter arm64,$(ARCH)),aarch64,$(if $(filter x86_64,$(ARCH)),x86_64,))
ifeq ($(ARCH_DIR),)
$(error ARCH=$(ARCH): ptimer builds for x86_64 and arm64)
endif
ifneq ($(ARCH),$(HOST_ARCH))
CROSS_COMPILE ?= $(if $(filter arm64,$(ARCH)),aarch64-linux-gnu-,x86_64-linux-gnu-)
B       := build-$(ARCH)
# the target's libraries, not the host's (Debian multiarch)
export PKG_CONFIG_LIBDIR ?= /usr/lib/$(CROSS_COMPILE:-=)/pkgconfig:/usr/share/pkgconfig
else
B       := build
endif
ifeq ($(origin CC),default)
CC      := $(CROSS_COMPILE)gcc
endif
ifeq ($(origin AR),default)
AR      := $(CROSS_COMPILE)ar
endif
OBJCOPY ?= $(CROSS_COMPILE)objcopy
READELF ?= $(CROSS_COMPILE)readelf
PROTOC_C ?= protoc-c
CFLAGS  ?= -O2 -g
CFLAGS  += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE -I. -I$(B)
# libnl-3 (the proc connector watch, core/procwatch.c) keeps its headers in /usr/include/libnl3
NL_CFLAGS ?= $(or $(shell pkg-config --cflags libnl-3.0 2>/dev/null),-I/usr/include/libnl3)
CFLAGS  += $(NL_CFLAGS)
# e.g. -fsanitize=address,undefined: host code and tests only, never the blob
SANITIZE ?=
CFLAGS  += $(SANITIZE)
# No libcompel: its compel_run_at/compel_syscall stop on int3, which kills
# the target when ptimer dies (restorer/host/inject.c runs code its own way).
LDLIBS  := -lprotobuf-c -ljson-c -lnl-3
# The fault build (-DPTIMER_FAULT_INJECT in SANITIZE) fails any of these
# calls on demand (PTIMER_FAIL_NTH, lib/fault_nth.h): the linker sends
# ptimer's own calls to lib/fault_nth.c's wrappers.  Not ptrace: on a
# thread ptimer holds stopped it fails only when the thread is being
# killed, which the kill tests make happen for real.
FAULT_WRAP := waitpid open openat fcntl prctl read write pread pwrite process_vm_readv \
	process_vm_writev kill tgkill fopen opendir fstat stat fstatat readlink unlinkat linkat mkdirat \
	rename renameat fsync fchmod fchown dup2 sigtimedwait
ifneq (,$(findstring PTIMER_FAULT_INJECT,$(SANITIZE)))
WRAP_LDFLAGS := $(foreach f,$(FAULT_WRAP),-Wl,--wrap=$(f))
LDLIBS += $(WRAP_LDFLAGS)
endif

# The in-target blob: freestanding, position independent, no SSE/FP/SIMD
# (the thread's extended registers are never saved or restored), no libc.
# BLOB_CC: the blob's compiler, CC unless set ('make asan' keeps gcc for it).
# Its architecture's part is restorer/arch/ARCH_DIR/ (entry.S, blob.lds,
# mem.c; the headers are picked by the compiler's target).
BLOB_CC ?= $(CC)
# the fault build's blob fails its N-th syscall too (restorer/sys.h)
BLOB_FAULT := $(filter -DPTIMER_FAULT_INJECT,$(SANITIZE))
BLOB_ARCH_CFLAGS_x86_64 := -mno-red-zone
# no loop turned into a call of memset/memcpy inside mem.c themselves
BLOB_ARCH_CFLAGS_aarch64 := -fno-tree-loop-distribute-patterns
BLOB_CFLAGS := -O2 -g0 -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-ffreestanding -fno-builtin -fpie -fno-plt -fno-stack-protector \
	-fno-asynchronous-unwind-tables -fno-unwind-tables -fno-jump-tables \
	-fno-exceptions -fcf-protection=none $(BLOB_ARCH_CFLAGS_$(ARCH_DIR)) -mgeneral-regs-only \
	-nostdlib -I. $(BLOB_FAULT)

PROTOS  := $(wildcard proto/*.proto)
PROTO_C := $(PROTOS:proto/%.proto=$(B)/proto/%.pb-c.c)
PROTO_H := $(PROTOS:proto/%.proto=$(B)/proto/%.pb-c.h)
PROTO_O := $(PROTOS:proto/%.proto=$(B)/proto/%.pb-c.o)

LIB_SRCS     := $(wildcard lib/*.c)
IMAGES_SRCS  := $(wildcard images/*.c)
CORE_SRCS    := $(wildcard core/*.c)
CLI_SRCS     := $(wildcard cli/*.c)
PLUGIN_SRCS  := $(wildcard plugin/*.c)
HOST_R_SRCS  := $(wildcard restorer/host/*.c)
ARCH_SRC     := restorer/arch/$(ARCH_DIR)
BLOB_SRCS    := restorer/algo.c $(ARCH_SRC)/mem.c
BLOB_ASM     := $(ARCH_SRC)/entry.S

LIB_OBJS := $(PROTO_O) $(LIB_SRCS:%.c=$(B)/%.o) $(IMAGES_SRCS:%.c=$(B)/%.o) $(CORE_SRCS:%.c=$(B)/%.o) \
	$(HOST_R_SRCS:%.c=$(B)/%.o) $(B)/restorer/blob_embed.o

.PHONY: all deb deps check tests guest demo bench clean install asan fuzz fuzz-build help
# Generated protobuf sources and blob stages are kept, not intermediate.
.SECONDARY:
# a cross build also makes the programs a guest kernel runs (test/qemu/)
all: $(B)/ptimer $(B)/ptimer_plugin.so $(if $(CROSS_COMPILE),guest)

# Header dependencies from the compiler: each object's .d file beside it
# (-MMD: the project's headers, -MP: a removed header is no error).
DEPFLAGS := -MMD -MP
-include $(shell find $(B) -name '*.d' 2>/dev/null)

$(B)/proto/%.pb-c.c $(B)/proto/%.pb-c.h &: proto/%.proto
	@mkdir -p $(B)/proto
	$(PROTOC_C) --proto_path=proto --c_out=$(B)/proto $<

$(B)/proto/%.pb-c.o: $(B)/proto/%.pb-c.c $(B)/proto/%.pb-c.h
	$(CC) $(CFLAGS) $(DEPFLAGS) -fPIC -c -o $@ $<

# The generated protobuf headers exist before the first compile (order
# only); after it the .d files name what each object includes.  Objects
# also follow this Makefile (flags; and objects of a build from before
# the .d files have none).
$(B)/%.o: %.c Makefile | $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -fPIC -c -o $@ $<

# --- the in-target blob ---------------------------------------------------
$(B)/restorer/blob/$(ARCH_DIR)/entry.o: $(BLOB_ASM) restorer/abi.h $(ARCH_SRC)/abi.h
	@mkdir -p $(dir $@)
	$(BLOB_CC) $(BLOB_CFLAGS) $(DEPFLAGS) -c -o $@ $<
$(B)/restorer/blob/%.bo: %.c Makefile
	@mkdir -p $(dir $@)
	$(BLOB_CC) $(BLOB_CFLAGS) $(DEPFLAGS) -MF $(@:.bo=.d) -c -o $@ $<
BLOB_OBJS := $(B)/restorer/blob/$(ARCH_DIR)/entry.o $(BLOB_SRCS:%.c=$(B)/restorer/blob/%.bo)
$(B)/restorer/blob.elf: $(BLOB_OBJS) $(ARCH_SRC)/blob.lds
	$(BLOB_CC) $(BLOB_CFLAGS) -nostdlib -static -Wl,--no-dynamic-linker -Wl,-T,$(ARCH_SRC)/blob.lds \
		-Wl,--build-id=none -o $@ $(BLOB_OBJS)
	@if $(READELF) -rW $@ | grep -q 'R_X86_64\|R_AARCH64'; then echo "blob has relocations: not position independent" >&2; exit 1; fi
$(B)/restorer/blob.bin: $(B)/restorer/blob.elf
	$(OBJCOPY) -O binary $< $@
$(B)/restorer/blob_embed.o: restorer/blob_embed.S $(B)/restorer/blob.bin
	$(CC) -c -DEMBED_BIN='"$(B)/restorer/blob.bin"' -DEMBED_START=ptimer_blob_start -DEMBED_END=ptimer_blob_end \
		-o $@ $<

# --- the tool ---------------------------------------------------------------
# VERSION holds the release, printed by `ptimer --version`.
VERSION := $(shell cat VERSION)
$(B)/cli/cli.o: CFLAGS += -DPTIMER_VERSION='"$(VERSION)"'
$(B)/cli/cli.o: VERSION
$(B)/ptimer: $(CLI_SRCS:%.c=$(B)/%.o) $(LIB_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# --- the CRIU plugin ----------------------------------------------------------
# Built against the system's criu-plugin.h (libcriu-dev / criu-dev on Debian
# 13+, the criu package on Debian 12).  print_on_level and
# criu_get_image_dir come from the criu binary that loads it.
# CRIU_PLUGIN_INC: a directory holding criu/criu-plugin.h of the criu the
# plugin will be loaded into, taken before the system's (a cross build on a
# Debian 12 host otherwise gets criu 3.17's, which has no CHECKPOINT_DEVICES
# hook: test/criu/arm64.sh passes sid's).
CRIU_PLUGIN_INC ?=
CRIU_PLUGIN_H ?= $(firstword $(wildcard $(if $(CRIU_PLUGIN_INC),$(CRIU_PLUGIN_INC)/criu/criu-plugin.h,/usr/include/criu/criu-plugin.h /usr/local/include/criu/criu-plugin.h)))
# A criu-plugin.h without CHECKPOINT_DEVICES (criu < 4.0, Debian 12's 3.17)
# builds a plugin that can only refuse a dump: said at build, not installed.
PLUGIN_CAN_DUMP := $(if $(shell grep -s CR_PLUGIN_HOOK__CHECKPOINT_DEVICES $(CRIU_PLUGIN_H)),yes)
PLUGIN_NO_DUMP  := $(CRIU_PLUGIN_H) has no CHECKPOINT_DEVICES hook (criu < 4.0): \
	ptimer_plugin.so built against it refuses every dump; set CRIU_PLUGIN_INC to the include directory of a criu 4.x
PLUGIN_CFLAGS := $(if $(CRIU_PLUGIN_INC),-I$(CRIU_PLUGIN_INC)) $(if $(PLUGIN_CAN_DUMP),-DPTIMER_HAVE_CHECKPOINT_DEVICES)
# the parts that include criu-plugin.h (plugin/plugin.h lists them)
PLUGIN_CRIU_SRCS := $(filter-out plugin/conf.c plugin/criu_core.c plugin/decide.c,$(PLUGIN_SRCS))
$(PLUGIN_CRIU_SRCS:%.c=$(B)/%.o): $(B)/%.o: %.c Makefile | $(PROTO_H)
	@mkdir -p $(dir $@)
	@[ -n "$(CRIU_PLUGIN_H)" ] || { echo "no criu-plugin.h: run 'make deps'" >&2; exit 1; }
	@[ -n "$(PLUGIN_CAN_DUMP)" ] || echo "warning: $(PLUGIN_NO_DUMP)" >&2
	$(CC) $(CFLAGS) $(DEPFLAGS) $(PLUGIN_CFLAGS) -fPIC -c -o $@ $<
# The plugin takes from the shared objects only what it calls (an archive),
# and needs no library it does not call (--as-needed): criu loads it into
# every restore, where each library more is a cost (json-c is the tool's).
$(B)/libptimer.a: $(LIB_OBJS)
	rm -f $@ && $(AR) rcs $@ $^
$(B)/ptimer_plugin.so: $(PLUGIN_SRCS:%.c=$(B)/%.o) $(B)/libptimer.a plugin/exports.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,ptimer_plugin.so -Wl,--version-script=plugin/exports.map -o $@ $(filter-out %.map,$^) $(WRAP_LDFLAGS) -Wl,--as-needed -lprotobuf-c -ljson-c -lnl-3

PREFIX  ?= /usr/local
DESTDIR ?=
install: all
	install -D -m 0755 $(B)/ptimer $(DESTDIR)$(PREFIX)/bin/ptimer
	@if [ -n "$(PLUGIN_CAN_DUMP)" ]; then \
		echo install -D -m 0644 $(B)/ptimer_plugin.so $(DESTDIR)$(PREFIX)/lib/criu/ptimer_plugin.so; \
		install -D -m 0644 $(B)/ptimer_plugin.so $(DESTDIR)$(PREFIX)/lib/criu/ptimer_plugin.so; \
	else \
		echo "make install: ptimer_plugin.so not installed: $(PLUGIN_NO_DUMP)" >&2; \
	fi
	install -D -m 0644 man/ptimer.1 $(DESTDIR)$(PREFIX)/share/man/man1/ptimer.1

# A Debian package of the binary and the plugin (in /usr/lib/criu), with its
# dependencies and /etc/criu/ptimer.conf (version: VERSION): apt-get install ./build/ptimer_*.deb
deb: all
	@[ -z "$(CROSS_COMPILE)" ] || { echo "make deb packages the host's architecture only (ARCH=$(ARCH) is a cross build): build the package on an $(ARCH) host" >&2; exit 1; }
	@sh packaging/mkdeb.sh $(B) $(VERSION)

# --- tests ------------------------------------------------------------------
UNIT_TESTS := $(patsubst test/unit/test_%.c,$(B)/test/test_%,$(wildcard test/unit/test_*.c))
E2E_PROGS  := $(patsubst test/e2e/%.c,$(B)/test/%,$(wildcard test/e2e/*.c))

# Every test program, unit and end to end, links the test library
# (test/lib/tst.c: the check lines, their counts and plans, the role protocol).
TST_O := $(B)/test/lib/tst.o
$(TST_O): test/lib/tst.c test/lib/tst.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

# The restore algorithm against the simulated kernel (test/unit/simkernel.c):
# objects built with PTIMER_SIMKERNEL go to $(B)/sim/.
$(B)/sim/%.o: %.c Makefile | $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -DPTIMER_SIMKERNEL -c -o $@ $<
SIM_OBJS := $(B)/sim/test/unit/simkernel.o $(B)/sim/restorer/algo.o
$(B)/test/test_algo: $(B)/sim/test/unit/test_algo.o $(SIM_OBJS) $(TST_O)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^
# The rseq host side against the simulated kernel, through the real blob code.
$(B)/test/test_rseq: $(B)/sim/test/unit/test_rseq.o $(SIM_OBJS) $(LIB_OBJS) $(TST_O)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)
# The plugin's settings file (plugin/conf.c needs no criu headers).
$(B)/test/test_plugin_conf: test/unit/test_plugin_conf.c $(B)/plugin/conf.o $(LIB_OBJS) $(TST_O)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -MF $@.d -MT $@ -o $@ $(filter %.c %.o,$^) $(LDLIBS)
# The plugin's decision table against docs/criu-plugin.md (no criu headers).
$(B)/test/test_decide: test/unit/test_decide.c $(B)/plugin/decide.o $(LIB_OBJS) $(TST_O)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -MF $@.d -MT $@ -o $@ $(filter %.c %.o,$^) $(LDLIBS)
# The plugin's hooks, loaded as criu loads it (dlopen); the program stands
# in for what the criu binary exports (-rdynamic).
$(B)/test/test_plugin_hooks: test/unit/test_plugin_hooks.c $(B)/ptimer_plugin.so $(TST_O)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(PLUGIN_CFLAGS) -MF $@.d -MT $@ -rdynamic -o $@ $< $(TST_O) -ldl
# The plugin's reading and editing of criu's core images (no criu needed).
$(B)/test/test_criu_core $(B)/test/test_criu_timers: $(B)/test/test_%: test/unit/test_%.c $(B)/plugin/criu_core.o $(LIB_OBJS) $(TST_O)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -MF $@.d -MT $@ -o $@ $(filter %.c %.o,$^) $(LDLIBS)
# One source each: its .d file is $@.d.
$(B)/test/test_%: test/unit/test_%.c $(LIB_OBJS) $(TST_O) | $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -MF $@.d -MT $@ -o $@ $< $(LIB_OBJS) $(TST_O) $(LDLIBS)
$(B)/test/%: test/e2e/%.c $(TST_O)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -MF $@.d -MT $@ -o $@ $< $(TST_O) -lrt -lpthread
# zdtm_timers reads /proc through lib/, as ptimer does.
$(B)/test/zdtm_timers: test/e2e/zdtm_timers.c $(TST_O) $(LIB_SRCS:%.c=$(B)/%.o)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -MF $@.d -MT $@ -o $@ $< $(TST_O) $(filter-out %/fault_nth.o,$(LIB_SRCS:%.c=$(B)/%.o)) -lrt -lpthread

tests: $(B)/ptimer $(UNIT_TESTS) $(E2E_PROGS)

# What the qemu kernel matrix (test/qemu/initramfs.sh) packs for a guest.
$(B)/qemu/kprobe: test/qemu/kprobe.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -o $@ $<
guest: $(B)/ptimer $(E2E_PROGS) $(B)/qemu/kprobe

check: tests fuzz-build asan
	@bash test/run.sh $(B)

# The unit and end-to-end suites built with ASan and UBSan into $(B)-asan;
# test/run.sh runs them.  This build also fails on demand at the points
# core/fault.h names (PTIMER_FAULT=POINT): the tests' injected failures.  clang, because gcc's UBSan next to ASan ignores
# log_path (test/run.sh collects reports from files); the blob keeps CC and
# BLOB_CFLAGS, no sanitizer.
ASAN_CC    ?= clang
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
asan:
	@$(MAKE) --no-print-directory B=$(B)-asan CC='$(ASAN_CC)' BLOB_CC='$(BLOB_CC)' SANITIZE='$(ASAN_FLAGS) -DPTIMER_FAULT_INJECT' tests

# --- fuzzing ------------------------------------------------------------------
# libFuzzer targets (clang, libclang-rt-14-dev) for the image reader, the JSON
# encoder input, the /proc/PID/timers parser and the plugin's reader of
# criu's core and pstree images, with ASan and UBSan.
# 'make check' replays test/fuzz/corpus/; 'make fuzz' runs each target
# FUZZ_SECONDS, new inputs going to a scratch directory (test/fuzz/run.sh).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_CFLAGS  := -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -I. -I$(B)
FUZZ_LIB     := $(LIB_SRCS) $(IMAGES_SRCS) core/proc_timers.c $(PROTO_C)
FUZZ_BINS    := $(patsubst test/fuzz/%.c,$(B)/fuzz/%,$(wildcard test/fuzz/fuzz_*.c))
$(B)/fuzz/fuzz_%: test/fuzz/fuzz_%.c test/fuzz/fuzz.h $(FUZZ_LIB) $(PROTO_H) $(wildcard lib/*.h images/*.h core/*.h restorer/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LIB) -lprotobuf-c -ljson-c
# criu's own images, as the plugin reads and edits them
$(B)/fuzz/fuzz_criu_core: FUZZ_LIB += plugin/criu_core.c
$(B)/fuzz/fuzz_criu_core: plugin/criu_core.c plugin/criu_core.h
fuzz-build: $(FUZZ_BINS)
fuzz: fuzz-build
	@bash test/fuzz/run.sh fuzz $(B) $(FUZZ_SECONDS)

# the run is printed, and written with the machine and date to docs/results.md
bench: tests
	@bash -c 'set -o pipefail; bash test/bench.sh $(B) | tee $(B)/bench.out'
	@bash test/bench-results.sh $(B)/bench.out >docs/results.md.tmp && mv docs/results.md.tmp docs/results.md
	@echo "bench: written to docs/results.md"

# the demo needs the build dependencies only (target-specific: deps sees it)
demo: DEPS = build
demo: deps all $(E2E_PROGS)
	@bash test/demo.sh $(B)

clean:
	rm -rf $(B) $(B)-asan

# the targets, from the head of this file
help:
	@sed -n 's/^#   make /make /p; s/^#                 /                /p' $(firstword $(MAKEFILE_LIST))

# --- dependencies -------------------------------------------------------------
# scripts/deps.sh: the Debian packages to build (DEPS=build) or also to run
# 'make check' (DEPS=all, the default; on x86_64 that includes the arm64
# cross build); installs what is missing (root).  With ARCH=arm64 on an
# x86_64 host: the cross toolchain and arm64 libraries, no host package removed.
DEPS ?= all
deps:
	@DEPS='$(DEPS)' CROSS_ARCH='$(if $(CROSS_COMPILE),$(ARCH))' sh scripts/deps.sh
