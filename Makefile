# blitz - top-level build. `make` builds everything, `make test` runs every
# test, `make demo` the main job, `make bench` the benchmark table.
# Sources are found by wildcard: a new file in a folder needs no edit here.

BUILD   ?= build
CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
ARCH    := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

CFLAGS  ?= -O2 -g
# userspace/ holds one folder per layer (scripts/lint-layers.sh says which
# may include which); every folder is on the include path, so a header is
# included by its name alone wherever it lives.
US_DIRS := $(sort $(patsubst %/,%,$(dir $(wildcard userspace/*/*.[ch] userspace/*/*/*.[ch]))))
US_INC  := $(addprefix -I,$(US_DIRS))
CFLAGS  += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -Ibpf $(US_INC)
LDLIBS  := -lxdp -lbpf -lelf -lz -lpthread -lm
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-I$(BUILD) -Ibpf -Ibpf/kern -I/usr/include/$(MULTIARCH)

# bpf/progs: the programs; bpf/: the headers they share with userspace and
# the tests; bpf/kern: the headers only programs include.
BPF_SRCS  := $(wildcard bpf/progs/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/progs/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/progs/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
BPF_HDRS  := $(wildcard bpf/*.h bpf/kern/*.h)

# Every userspace .c but the CLI's main goes into libblitz.a, which the
# CLI, the tests and the dpdk engine link.
MAIN_SRC  := userspace/cli/main.c
LIB_SRCS  := $(filter-out $(MAIN_SRC),$(wildcard $(addsuffix /*.c,$(US_DIRS))))
LIB_OBJS  := $(patsubst userspace/%.c,$(BUILD)/us/%.o,$(LIB_SRCS))
USER_HDRS := $(wildcard $(addsuffix /*.h,$(US_DIRS)))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(HELPER_SRCS))
BPFT_SRCS := $(wildcard tests/bpf/test_*.c)
BPFT_BINS := $(patsubst tests/bpf/%.c,$(BUILD)/tests/bpf/%,$(BPFT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/tests/fuzz/%,$(FUZZ_SRCS))

# make cost: ablation builds of the xdp program, each the same source with
# one component skipped or replaced (tests/perf/xdp_cost.c measures them
# against the real build). `all` compiles, and the smoke test
# (tests/e2e/test_cost.sh) measures the one with every switch at once.
COST_NAMES   := lookup nofilter parse load resp render mac csum verify
COST_D_lookup := -DBLITZ_COST_NO_SKLOOKUP
COST_D_nofilter := -DBLITZ_COST_NO_KSOCK
COST_D_parse  := -DBLITZ_COST_NO_PARSE
COST_D_load   := -DBLITZ_COST_NO_LOAD_PAYLOAD
COST_D_resp   := -DBLITZ_COST_NO_STORE_RESP
COST_D_render := -DBLITZ_COST_NO_RENDER
COST_D_mac    := -DBLITZ_COST_NO_MAC
COST_D_csum   := -DBLITZ_COST_NO_CSUM
COST_D_verify := -DBLITZ_COST_NO_VERIFY
COST_D_all    := $(foreach n,$(filter-out nofilter,$(COST_NAMES)),$(COST_D_$(n)))
COST_OBJS    := $(patsubst %,$(BUILD)/cost/blitz_xdp.%.bpf.o,$(COST_NAMES))
COST_TOOL    := $(BUILD)/tests/perf/xdp_cost
COST_ROUNDS  ?= 11
COST_RUNS    ?= 1000

# The lossy link of the loss tests and benchmarks (tests/e2e/lib_loss.sh):
# one tc dropper per rate, LOSS_PERMILLE frames in 1000.
LOSS_RATES := 10 50
LOSS_OBJS  := $(patsubst %,$(BUILD)/tests/loss/loss_%.bpf.o,$(LOSS_RATES))

DPDK_SRCS := $(wildcard dpdk/*.c)
HAVE_DPDK := $(shell pkg-config --exists libdpdk 2>/dev/null && echo yes)
ifeq ($(HAVE_DPDK)$(DPDK_SRCS),yes$(DPDK_SRCS))
ifneq ($(DPDK_SRCS),)
DPDK_BIN  := $(BUILD)/blitz-dpdk
endif
endif

.PHONY: all deps test check demo demo-fleet bench cost docs lint format clean install uninstall man
all: $(BUILD)/blitz $(BPF_OBJS) $(UNIT_BINS) $(HELPER_BINS) $(BPFT_BINS) $(FUZZ_BINS) $(DPDK_BIN) \
	$(BUILD)/cost/blitz_xdp.all.bpf.o $(COST_TOOL) $(LOSS_OBJS)

deps:
	./scripts/install-deps.sh

$(BUILD)/vmlinux.h:
	@mkdir -p $(BUILD)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/%.bpf.o: bpf/progs/%.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/cost/blitz_xdp.%.bpf.o: bpf/progs/blitz_xdp.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) $(COST_D_$*) -c $< -o $@

$(BUILD)/tests/loss/loss_%.bpf.o: tests/loss/loss.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG) -O2 -g -target bpf -Wall -Werror -DLOSS_PERMILLE=$* \
		-I/usr/include/$(MULTIARCH) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/us/%.o: userspace/%.c $(USER_HDRS) $(BPF_HDRS) $(SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The objects that embed a BPF program's skeleton are rebuilt with it
# (order-only above would keep a stale program in build/blitz).
$(patsubst userspace/%.c,$(BUILD)/us/%.o,$(wildcard userspace/bpfctl/loader*.c)): $(BUILD)/blitz_xdp.skel.h
$(BUILD)/us/bpfctl/tc_handoff.o: $(BUILD)/blitz_tc.skel.h $(BUILD)/blitz_probe.skel.h
$(BUILD)/us/bpfctl/ksock.o: $(BUILD)/blitz_ksock.skel.h
$(BUILD)/us/bench/bench_xdp.o: $(BUILD)/bench_gen.skel.h

$(BUILD)/libblitz.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/blitz: $(MAIN_SRC) $(BUILD)/libblitz.a $(USER_HDRS) | $(SKELS)
	$(CC) $(CFLAGS) $< $(BUILD)/libblitz.a -o $@ $(LDLIBS)

$(BUILD)/tests/unit/%: tests/unit/%.c $(BUILD)/libblitz.a tests/testlib.h tests/frame.h $(USER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests $< $(BUILD)/libblitz.a -o $@ $(LDLIBS)

# The e2e tests' C helper programs (tests/helpers/): built here, with -Werror.
$(BUILD)/tests/helpers/%: tests/helpers/%.c $(BUILD)/libblitz.a $(USER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libblitz.a -o $@ $(LDLIBS)

# DPDK's headers for the test of the dpdk engine's checksum verdicts;
# left out where DPDK is not installed.
ifeq ($(HAVE_DPDK),yes)
$(BUILD)/tests/unit/test_dpdk_rx_csum: tests/unit/test_dpdk_rx_csum.c dpdk/rx_csum.h tests/testlib.h $(USER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(shell pkg-config --cflags libdpdk) -Itests -Idpdk $< -o $@
else
UNIT_BINS := $(filter-out $(BUILD)/tests/unit/test_dpdk_rx_csum,$(UNIT_BINS))
endif

# The cut-MAC build of the cookie tests includes the real one.
$(BUILD)/tests/unit/test_cookie_mac10: tests/unit/test_cookie.c

$(BUILD)/tests/bpf/%: tests/bpf/%.c $(BUILD)/libblitz.a tests/testlib.h tests/frame.h $(USER_HDRS) $(SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests $< $(BUILD)/libblitz.a -o $@ $(LDLIBS)

# test_seq's oracle against the XDP program with the TSval MAC compared on
# 10 bits (chance matches at a wrong point become common): its own build
# and skeleton, found before build/'s. NARROW_D=-DBLITZ_TSPT_OFF (after
# rm -r build/narrow) builds the negative control: no point entry, the
# oracle must fail.
NARROW_D ?=
SEQ_NARROW_BITS := 6
$(BUILD)/narrow/blitz_xdp.bpf.o: bpf/progs/blitz_xdp.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -DBLITZ_CK2_TS_MAC_CUT=$(SEQ_NARROW_BITS) $(NARROW_D) -c $< -o $@

$(BUILD)/narrow/blitz_xdp.skel.h: $(BUILD)/narrow/blitz_xdp.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/bpf/test_seq_narrow: tests/bpf/test_seq_narrow.c tests/bpf/test_seq.c $(BUILD)/narrow/blitz_xdp.skel.h $(BUILD)/libblitz.a tests/testlib.h tests/frame.h $(USER_HDRS) $(SKELS)
	@mkdir -p $(dir $@)
	$(CC) -I$(BUILD)/narrow $(CFLAGS) -Itests $< $(BUILD)/libblitz.a -o $@ $(LDLIBS)

$(COST_TOOL): tests/perf/xdp_cost.c $(BUILD)/libblitz.a tests/cookie_ring.h tests/frame.h $(USER_HDRS) $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests $< $(BUILD)/libblitz.a -o $@ $(LDLIBS)

# libFuzzer targets: clang with the fuzzer and address sanitizers, linked
# with the sources they exercise rather than libblitz.a (built by gcc).
FUZZ_LIB_SRCS := $(wildcard userspace/service/http*.c userspace/net/tcp_*.c userspace/net/wire.c userspace/base/log.c)
$(BUILD)/tests/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_SRCS) $(USER_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) -O1 -g -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
		-I$(BUILD) -Ibpf $(US_INC) $< $(FUZZ_LIB_SRCS) -o $@ $(LDLIBS)

$(BUILD)/blitz-dpdk: $(DPDK_SRCS) $(wildcard dpdk/*.h) $(BUILD)/libblitz.a $(USER_HDRS)
	$(CC) $(CFLAGS) -Wno-error=deprecated-declarations $(shell pkg-config --cflags libdpdk) \
		$(DPDK_SRCS) $(BUILD)/libblitz.a -o $@ $(shell pkg-config --libs libdpdk) $(LDLIBS)

# The tests: install what they need, build, run every suite, and end on
# the runner's "N passed, N failed, N skipped" line.
test:
	./scripts/install-deps.sh
	$(MAKE) all
	./tests/run.sh

# The fast tier for the edit-build-test loop (under 3 minutes on a quiet
# 2-CPU machine): the unit and BPF suites and a few seconds of each fuzzer.
# `make test` stays the whole suite.
CHECK_FUZZ_SECONDS ?= 5
check: $(BUILD)/blitz $(UNIT_BINS) $(BPFT_BINS) $(FUZZ_BINS)
	FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS) ./tests/run.sh unit bpf fuzz

# The main job: testbed, load blitz onto its NIC, benchmark against the
# kernel path (nginx), unload.
demo:
	./scripts/install-deps.sh
	$(MAKE) all
	./scripts/demo.sh

# A fleet of blitz hosts behind an ECMP router, one key file, keep-alive
# clients across rehashes; prints every host's counters.
demo-fleet:
	./scripts/install-deps.sh
	$(MAKE) all
	./scripts/demo-fleet.sh

DURATION ?= 3
CONNS    ?= 10 64 100 300
bench:
	./scripts/install-deps.sh
	$(MAKE) all
	DURATION="$(DURATION)" CONNS="$(CONNS)" ./scripts/bench.sh

# The cost of each component of the xdp program (a benchmark, not a test:
# not part of `make test`): COST_ROUNDS shuffled rounds of COST_RUNS
# BPF_PROG_TEST_RUNs per (build, frame), medians, ratios to the floor.
# COST_BASE=path/blitz_xdp.base.bpf.o adds another build (say, of an
# older commit) to the same run: its row is the before/after comparison.
cost: $(BUILD)/blitz_xdp.bpf.o $(COST_OBJS) $(COST_TOOL)
	$(COST_TOOL) --rounds $(COST_ROUNDS) --runs $(COST_RUNS) \
		$(BUILD)/blitz_xdp.bpf.o $(COST_OBJS) $(COST_BASE)

# `make install [PREFIX=/usr/local] [DESTDIR=...]`: the binaries (the BPF
# programs are embedded in them as skeletons), the veth peer's pass-all
# program, blitz(8) generated from the usage texts, the systemd template
# units blitz@.service (serve) and blitz-load@.service (load) and an
# example of their /etc/blitz/<ifname>.conf.
PREFIX     ?= /usr/local
SBINDIR    ?= $(PREFIX)/sbin
DATADIR    ?= $(PREFIX)/share/blitz
MANDIR     ?= $(PREFIX)/share/man
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
UNITS      := $(patsubst %.in,%,$(notdir $(wildcard scripts/systemd/*.service.in)))
# The units and the example say where things are installed: filled in at
# install time, so a new PREFIX never meets an old build.
SUBST      = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'

man: $(BUILD)/blitz.8
$(BUILD)/blitz.8: $(BUILD)/blitz scripts/gen-man.sh
	scripts/gen-man.sh $(BUILD)/blitz > $@.tmp && mv $@.tmp $@

install: $(BUILD)/blitz $(DPDK_BIN) $(BUILD)/xdp_pass.bpf.o $(BUILD)/blitz.8
	install -D -m 0755 $(BUILD)/blitz $(DESTDIR)$(SBINDIR)/blitz
	$(if $(DPDK_BIN),install -D -m 0755 $(DPDK_BIN) $(DESTDIR)$(SBINDIR)/blitz-dpdk)
	install -D -m 0644 $(BUILD)/xdp_pass.bpf.o $(DESTDIR)$(DATADIR)/xdp_pass.bpf.o
	install -D -m 0644 $(BUILD)/blitz.8 $(DESTDIR)$(MANDIR)/man8/blitz.8
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/blitz
	$(foreach u,$(UNITS),$(SUBST) scripts/systemd/$(u).in > $(DESTDIR)$(UNITDIR)/$(u) &&) true
	$(SUBST) scripts/systemd/example.conf.in > $(DESTDIR)$(SYSCONFDIR)/blitz/example.conf

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/blitz $(DESTDIR)$(SBINDIR)/blitz-dpdk \
		$(DESTDIR)$(DATADIR)/xdp_pass.bpf.o $(DESTDIR)$(MANDIR)/man8/blitz.8 \
		$(DESTDIR)$(SYSCONFDIR)/blitz/example.conf \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS))
	-rmdir $(DESTDIR)$(DATADIR) $(DESTDIR)$(SYSCONFDIR)/blitz 2>/dev/null

# The usage texts made from the option tables: docs/usage.md and README's
# CLI block (tests/unit/test_usage.c fails when they are out of date); the
# README's result table and docs/bench.md from docs/bench.json
# (tests/e2e/test_readme_results.sh). `make docs BENCH=bench-results/latest.json`
# first makes that run (and its plot) the documented one.
docs: $(BUILD)/blitz
	./scripts/gen-usage.sh $(BUILD)/blitz
	$(if $(BENCH),cp $(BENCH) docs/bench.json && { cp $(BENCH:.json=.png) docs/bench.png 2>/dev/null || true; })
	./scripts/gen-results.sh readme docs/bench.json

C_FILES = $(shell git ls-files '*.c' '*.h')
format:
	clang-format -i $(C_FILES)

lint:
	clang-format --dry-run --Werror $(C_FILES)
	cppcheck --quiet --error-exitcode=1 --suppress=missingIncludeSystem \
		-I bpf $(US_INC) userspace tests/unit tests/helpers
	shellcheck -x scripts/*.sh tests/*.sh tests/e2e/*.sh .ci/run
	./scripts/lint-docs.sh
	./scripts/lint-layers.sh

clean:
	rm -rf $(BUILD)
