# keep — build, check, install, demo.
#
#   make            release build into build/rel/bin (never installs anything:
#                   a missing package stops it with a message saying to run
#                   `make deps`)
#   make deps       install what the build needs (scripts/install-deps.sh)
#   make run        make deps, then keep-agent for node n1 on the embedded fs
#                   store (./run/)
#   make check      unit + end-to-end tests, sanitizer build, fs AND real S3
#   make demo       a small cluster on the fs store, with a failover
#   make install    PREFIX=/usr/local DESTDIR=
#
# Sources are found by wildcard: lib/LAYER/*.c make libkeep, each cmd/NAME.c
# makes the command NAME, each tests/unit/test_*.c a unit test, sim/*.c the
# simulator. lib/core, lib/base (the vocabulary) and lib/codec also make
# libkeep-core.a, which needs nothing but libc and libm (docs/design.md).

# The version, defined once: the file VERSION (make VERSION=x overrides it).
# Only lib/platform/version.c is compiled with it (lib/platform/version.h): every --version,
# the software line of nodes/<id>, the man pages and keep.pc show it.
VERSION := $(shell cat VERSION 2>/dev/null || echo unknown)
VERSION_DEF = -DKEEP_VERSION='"$(VERSION)"'

PREFIX ?= /usr/local
NPROC := $(shell nproc 2>/dev/null || echo 2)
DESTDIR ?=
CC ?= cc
# libcurl is compiled against but not linked: the S3 backend loads it with
# dlopen when the first S3 store opens (lib/store/curlfn_internal.h; at
# exec, linking it cost every command 14 ms, fs store or not:
# docs/performance.md "Exec cost")
PKGS := libcurl openssl yaml-0.1 expat jansson
LINK_PKGS := openssl yaml-0.1 expat jansson
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(LINK_PKGS) 2>/dev/null) -ldl
# commands that never touch the store link without OpenSSL and expat
# (keep, the umbrella, only runs the others)
# (owner-check runs before every commit: its exec cost is in
# docs/performance.md); a store call slipping in makes their link fail
LIGHT_CMDS := owner-check lease-status keep
LIGHT_LIBS = $(shell pkg-config --libs yaml-0.1 2>/dev/null)

WARN := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-unused-parameter -Wvla -Wformat=2
REL_CFLAGS := -O2 -g $(WARN) -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIC
SAN_CFLAGS := -O1 -g $(WARN) -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined -DKEEP_FAULT_INJECTION
# -no-pie: a position-independent executable under ASan carries some 20000
# relocations (its globals' metadata) that every start applies, page by
# page; without them a command starts with 15 % fewer page faults, and the
# suite runs thousands (docs/testing.md, "Sanitizers")
SAN_LDFLAGS := -fsanitize=address,undefined -no-pie

LIB_SRC := $(sort $(wildcard lib/*/*.c))
# libkeep-core.a: the sans-I/O core, the shared vocabulary and the codecs
CORE_SRC := $(sort $(wildcard lib/base/*.c lib/codec/*.c lib/core/*.c))
# The installed headers, the public API (docs/design.md "Public API"): the
# vocabulary, the codecs, the core machines, the store interface and the
# fenced commit (with the grant facts it takes); the rest is internal.
PUBLIC_HDR := $(sort $(wildcard lib/base/*.h lib/codec/*.h lib/core/*.h) lib/store/store.h \
	lib/driver/commit.h lib/local/holds.h)
CMD_SRC := $(sort $(wildcard cmd/*.c))
CMDS := $(patsubst cmd/%.c,%,$(CMD_SRC))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_HELP := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))
SIM_SRC := $(sort $(wildcard sim/*.c))
# Test tools: each tests/tools/NAME.c is a program build/FLAVOUR/tools/NAME
# (linked with libkeep); each tests/preload/NAME.c an LD_PRELOAD library
# build/FLAVOUR/tools/NAME.so, built without sanitizers (the bats helpers set
# ASAN_OPTIONS=verify_asan_link_order=0 when they preload one).
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))
PRELOAD_SRC := $(sort $(wildcard tests/preload/*.c))
PRELOAD_CFLAGS := -O2 -g $(WARN) -fPIC -shared
SCRIPTS := agent/keep-agent

DEPS_STAMP := build/.deps-ok

.PHONY: all rel rel-bin relfi-bin san check unit deps test-deps run demo install clean sim-deep fmt
# keep every object (cmd/, tests/, sim/ ones are intermediate otherwise, and
# were deleted and rebuilt on every make)
.SECONDARY:
all: rel

# The stamp says the packages were found; objects depend on it order-only,
# so `make deps` never forces a rebuild. A plain make only checks.
$(DEPS_STAMP):
	@mkdir -p build
	@pkg-config --exists $(PKGS) || { echo "make: missing packages ($(PKGS));" \
		"run 'make deps' (or sh scripts/install-deps.sh) first" >&2; exit 1; }
	@touch $(DEPS_STAMP)

deps:
	@mkdir -p build
	@pkg-config --exists $(PKGS) || sh scripts/install-deps.sh
	@pkg-config --exists $(PKGS) && touch $(DEPS_STAMP)

# what make check needs beyond the build (bats, clang's libFuzzer, valgrind, ...)
test-deps:
	@sh scripts/install-deps.sh --test

# ---- one template per flavour ----------------------------------------------
define FLAVOUR
$(1)_OBJ := $$(patsubst %.c,build/$(1)/obj/%.o,$$(LIB_SRC))
$(1)_CORE_OBJ := $$(patsubst %.c,build/$(1)/obj/%.o,$$(CORE_SRC))
build/$(1)/obj/%.o: %.c | $$(DEPS_STAMP)
	@mkdir -p $$(@D)
	$$(CC) $$($(2)) $$(OBJ_CFLAGS) $$(PKG_CFLAGS) -MMD -MP -c $$< -o $$@
build/$(1)/obj/lib/platform/version.o: VERSION
build/$(1)/obj/lib/platform/version.o: OBJ_CFLAGS = $$(VERSION_DEF)
build/$(1)/libkeep.a: $$($(1)_OBJ)
	@rm -f $$@
	ar rcs $$@ $$^
build/$(1)/libkeep-core.a: $$($(1)_CORE_OBJ)
	@rm -f $$@
	ar rcs $$@ $$^
$$(addprefix build/$(1)/bin/,$$(LIGHT_CMDS)): build/$(1)/bin/%: build/$(1)/obj/cmd/%.o \
		build/$(1)/libkeep.a
	@mkdir -p $$(@D)
	$$(CC) $$($(2)) $$^ -o $$@ $$($(3)) $$(LIGHT_LIBS) -lm
build/$(1)/bin/%: build/$(1)/obj/cmd/%.o build/$(1)/libkeep.a
	@mkdir -p $$(@D)
	$$(CC) $$($(2)) $$^ -o $$@ $$($(3)) $$(PKG_LIBS) -lm
build/$(1)/bin/keep-agent: agent/keep-agent
	@mkdir -p $$(@D)
	cp $$< $$@ && chmod 755 $$@
build/$(1)/bin/keep-sim: $$(patsubst %.c,build/$(1)/obj/%.o,$$(SIM_SRC)) build/$(1)/libkeep.a
	@mkdir -p $$(@D)
	$$(CC) $$($(2)) $$^ -o $$@ $$($(3)) $$(PKG_LIBS) -lm
build/$(1)/tests/%: build/$(1)/obj/tests/unit/%.o $$(patsubst %.c,build/$(1)/obj/%.o,$$(UNIT_HELP)) build/$(1)/libkeep.a
	@mkdir -p $$(@D)
	$$(CC) $$($(2)) $$^ -o $$@ $$($(3)) $$(PKG_LIBS) -lm
build/$(1)/tools/%: build/$(1)/obj/tests/tools/%.o build/$(1)/libkeep.a
	@mkdir -p $$(@D)
	$$(CC) $$($(2)) $$^ -o $$@ $$($(3)) $$(PKG_LIBS) -lm -lpthread
build/$(1)/tools/%.so: tests/preload/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(PRELOAD_CFLAGS) $$< -o $$@ -ldl
$(1): build/$(1)/libkeep-core.a \
	$$(addprefix build/$(1)/bin/,$$(CMDS) keep-agent $$(if $$(SIM_SRC),keep-sim)) \
	$$(patsubst tests/unit/%.c,build/$(1)/tests/%,$$(UNIT_SRC)) \
	$$(patsubst tests/tools/%.c,build/$(1)/tools/%,$$(TOOL_SRC)) \
	$$(patsubst tests/preload/%.c,build/$(1)/tools/%.so,$$(PRELOAD_SRC))
# every object's dependency file (libkeep, commands, unit tests, the
# simulator, test tools): touching one header rebuilds only what includes it
-include $$(patsubst %.c,build/$(1)/obj/%.d,$$(LIB_SRC) $$(CMD_SRC) $$(UNIT_SRC) $$(UNIT_HELP) \
	$$(SIM_SRC) $$(TOOL_SRC))
endef
$(eval $(call FLAVOUR,rel,REL_CFLAGS,))
$(eval $(call FLAVOUR,san,SAN_CFLAGS,SAN_LDFLAGS))
# build/relfi: the release flags (-O2, fortified) with fault injection
# compiled in and no sanitizers: the commands of make check's S3 pass, but
# for the files that keep the sanitizer build there (tests/run-all.sh). Only
# the commands and the test tools: no unit tests or simulator.
RELFI_CFLAGS := $(REL_CFLAGS) -DKEEP_FAULT_INJECTION
$(eval $(call FLAVOUR,relfi,RELFI_CFLAGS,))
relfi-bin: $(addprefix build/relfi/bin/,$(CMDS) keep-agent) \
	$(patsubst tests/tools/%.c,build/relfi/tools/%,$(TOOL_SRC)) \
	$(patsubst tests/preload/%.c,build/relfi/tools/%.so,$(PRELOAD_SRC))

# ---- checks ------------------------------------------------------------------
# make check: the unit tests, the simulator and the fs pass under
# ASan+UBSan, fault injection compiled in; the bats suites run on the fs
# store and on a real S3 server (Ceph RGW on loopback, started and stopped
# by tests/run-all.sh unless S3_ENDPOINT is already set). The S3 pass runs
# build/relfi (-O2, fault injection, no sanitizers: the code as shipped),
# but for its files marked `# run-all: sanitizers`, the S3 backend's own
# (docs/testing.md "Sanitizers"). The last line is "N passed, N failed".
# The release build (build/rel, with libkeep.so) is built first too: the
# install and cron tests install it, 0830 runs it under valgrind, make run
# (0257) runs it; built here, no two tests running side by side build it
# at once. Both builds use every core (the tests wait on timers; the build
# does not).
check: test-deps
	$(MAKE) --no-print-directory -j$(NPROC) san rel relfi-bin build/rel/libkeep.so
	KEEP_TEST_S3_BUILD=build/relfi sh tests/run-all.sh build/san

unit: san
	sh tests/run-all.sh build/san unit

sim-deep: san
	KEEP_SIM_SEEDS=20000 sh tests/run-all.sh build/san sim

# make run: only the release commands are built (not the tests or the
# simulator), quietly; then keep-agent runs node n1 on the embedded store
# in RUN_DIR (./run). On a terminal it runs in a foreground process group
# of its own (set -m): Ctrl-C reaches the agent alone, which makes its one
# clean stop and exits 0, so make ends without an "Interrupt" error.
RUN_DIR ?= $(CURDIR)/run
rel-bin: $(addprefix build/rel/bin/,$(CMDS) keep-agent)
run: deps
	@echo "keep: building the commands (build/rel/bin) ..."
	@$(MAKE) --no-print-directory -s rel-bin
	@mkdir -p "$(RUN_DIR)/bucket" "$(RUN_DIR)/state"
	@"$(CURDIR)/build/rel/bin/keep" init --store "file://$(RUN_DIR)/bucket" || \
		echo "keep: $(RUN_DIR)/bucket stays on the upgrade path (docs/operations.md)"
	@echo "keep: node n1 on the embedded store $(RUN_DIR)/bucket (state: $(RUN_DIR)/state); Ctrl-C stops it cleanly"
	@sh -c 'if [ -t 0 ]; then set -m; fi; \
		KEEP_BINDIR="$(CURDIR)/build/rel/bin" "$(CURDIR)/build/rel/bin/keep-agent" \
		--store "file://$(RUN_DIR)/bucket" --node-id n1 --state-dir "$(RUN_DIR)/state"; \
		rc=$$?; exit $$rc'

# make demo: the release commands built quietly (as make run), then the demo
demo: deps
	@echo "keep: building the commands (build/rel/bin) ..."
	@$(MAKE) --no-print-directory -s rel-bin
	@KEEP_BINDIR=$(CURDIR)/build/rel/bin sh scripts/demo.sh

# libkeep.so: the release objects (built -fPIC), soname libkeep.so.0.
build/rel/libkeep.so: $(rel_OBJ)
	$(CC) -shared -Wl,-soname,libkeep.so.0 $^ -o $@ $(PKG_LIBS) -lm -lpthread

# make install PREFIX=/usr DESTDIR=/tmp/root: commands and keep-agent, man
# pages, libkeep (static and shared), libkeep-core.a, their headers
# (include/keep/, with core/ and store/), keep.pc and keep-core.pc, bash
# completion, systemd units and the cron job (their /usr/local paths
# rewritten to PREFIX), the service user (lib/sysusers.d/keep.conf), the
# Prometheus alert rules (share/keep/prometheus/keep-rules.yml) and the docs.
# The cron job goes where cron reads it, /etc/cron.d, for PREFIX=/usr or
# /usr/local; for any other PREFIX to PREFIX/etc/cron.d (an example to
# copy; cron does not read it). CRONDIR=DIR puts it elsewhere, CRONDIR=
# (empty) leaves it out. docs/operations.md.
BINDIR = $(PREFIX)/bin
LIBDIR = $(PREFIX)/lib
INCDIR = $(PREFIX)/include/keep
MANDIR = $(PREFIX)/share/man
DOCDIR = $(PREFIX)/share/doc/keep
UNITDIR = $(PREFIX)/lib/systemd/system
COMPDIR = $(PREFIX)/share/bash-completion/completions
SYSUSERSDIR = $(PREFIX)/lib/sysusers.d
RULESDIR = $(PREFIX)/share/keep/prometheus
ifneq ($(filter /usr /usr/local,$(patsubst %/,%,$(PREFIX))),)
CRONDIR ?= /etc/cron.d
else
CRONDIR ?= $(PREFIX)/etc/cron.d
endif
install: rel build/rel/libkeep.so
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(DOCDIR)/runbooks $(DESTDIR)$(UNITDIR) $(DESTDIR)$(COMPDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(RULESDIR)
	install -m 755 $(addprefix build/rel/bin/,$(CMDS) keep-agent) $(DESTDIR)$(BINDIR)/
	install -m 644 build/rel/libkeep.a $(DESTDIR)$(LIBDIR)/libkeep.a
	install -m 644 build/rel/libkeep-core.a $(DESTDIR)$(LIBDIR)/libkeep-core.a
	install -m 755 build/rel/libkeep.so $(DESTDIR)$(LIBDIR)/libkeep.so.0
	ln -sf libkeep.so.0 $(DESTDIR)$(LIBDIR)/libkeep.so
	for h in $(PUBLIC_HDR); do \
		install -D -m 644 $$h $(DESTDIR)$(INCDIR)/$${h#lib/} || exit 1; \
	done
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(PREFIX)/include' '' \
		'Name: keep' 'Description: node leases and ownership records on an object store' \
		'Version: $(VERSION)' 'Requires.private: $(LINK_PKGS)' \
		'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lkeep' \
		'Libs.private: -lm -lpthread -ldl' >$(DESTDIR)$(LIBDIR)/pkgconfig/keep.pc
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(PREFIX)/include' '' \
		'Name: keep-core' \
		'Description: keep'"'"'s sans-I/O protocol core (node lease, fencing, ownership machines)' \
		'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lkeep-core -lm' \
		>$(DESTDIR)$(LIBDIR)/pkgconfig/keep-core.pc
	install -m 644 $(wildcard man/*.1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(wildcard man/*.5) $(DESTDIR)$(MANDIR)/man5/
	install -m 644 completion/keep.bash $(DESTDIR)$(COMPDIR)/keep
	for f in $(filter-out keep,$(CMDS)) keep-agent; do ln -sf keep $(DESTDIR)$(COMPDIR)/$$f; done
	for u in $(wildcard etc/systemd/*.service etc/systemd/*.timer); do \
		sed 's|/usr/local/|$(PREFIX)/|g' $$u >$(DESTDIR)$(UNITDIR)/$${u##*/} && \
		chmod 644 $(DESTDIR)$(UNITDIR)/$${u##*/} || exit 1; done
	if [ -n "$(CRONDIR)" ]; then \
		install -d $(DESTDIR)$(CRONDIR) && \
		sed 's|/usr/local/|$(PREFIX)/|g' etc/cron.d/keep-forget >$(DESTDIR)$(CRONDIR)/keep-forget && \
		chmod 644 $(DESTDIR)$(CRONDIR)/keep-forget || exit 1; fi
	install -m 644 etc/sysusers.d/keep.conf $(DESTDIR)$(SYSUSERSDIR)/keep.conf
	install -m 644 etc/prometheus/keep-rules.yml $(DESTDIR)$(RULESDIR)/keep-rules.yml
	install -m 644 README.md $(wildcard docs/*.md) etc/keep.yaml $(DESTDIR)$(DOCDIR)/
	install -m 644 $(wildcard docs/runbooks/*.md) $(DESTDIR)$(DOCDIR)/runbooks/

fmt:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build

# ---- fuzzing (libFuzzer; clang) ---------------------------------------------
# make fuzz        each fuzz/fuzz_*.c harness for FUZZ_SECONDS (default 60)
# make fuzz        random exploration, by hand (not in CI)
# make fuzz-smoke  what CI runs: tests/bats/0840-fuzz-smoke.bats, each harness
#                  for a fixed number of runs with a fixed seed (deterministic)
# libkeep is rebuilt with clang under ASan+UBSan and coverage into build/fuzz.
# Each harness starts from its seeds in fuzz/corpus/NAME (read-only) and keeps
# what it finds in build/fuzz/corpus/NAME; a crash is saved as
# build/fuzz/crashes/NAME-crash-* and fails the target. See docs/testing.md.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_NAMES := $(patsubst fuzz/%.c,%,$(FUZZ_SRC))
FUZZ_CFLAGS := -O1 -g -std=c11 -D_GNU_SOURCE -fno-omit-frame-pointer -Werror=int-conversion \
	-Werror=incompatible-pointer-types -Werror=incompatible-function-pointer-types \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
fuzz_OBJ := $(patsubst %.c,build/fuzz/obj/%.o,$(LIB_SRC))

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-determinism
.PRECIOUS: build/fuzz/obj/fuzz/%.o
build/fuzz/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(OBJ_CFLAGS) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -MMD -MP -c $< -o $@
build/fuzz/obj/lib/platform/version.o: OBJ_CFLAGS = $(VERSION_DEF)
build/fuzz/libkeep.a: $(fuzz_OBJ)
	@rm -f $@
	ar rcs $@ $^
build/fuzz/bin/%: build/fuzz/obj/fuzz/%.o build/fuzz/libkeep.a
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(PKG_LIBS) -lm
-include $(fuzz_OBJ:.o=.d) $(patsubst %,build/fuzz/obj/fuzz/%.d,$(FUZZ_NAMES))

fuzz-build: $(addprefix build/fuzz/bin/,$(FUZZ_NAMES))

fuzz: fuzz-build
	@mkdir -p build/fuzz/crashes
	@failed=0; for n in $(FUZZ_NAMES); do \
		mkdir -p build/fuzz/corpus/$$n fuzz/corpus/$$n; \
		echo "# fuzz: $$n for $(FUZZ_SECONDS) s"; \
		if build/fuzz/bin/$$n -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 \
			-print_final_stats=1 -artifact_prefix=build/fuzz/crashes/$$n- \
			build/fuzz/corpus/$$n fuzz/corpus/$$n >build/fuzz/$$n.log 2>&1; then \
			echo "ok - fuzz $$n: $$(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' \
				build/fuzz/$$n.log | sed 's/.*: //') runs, no crash"; \
		else \
			echo "not ok - fuzz $$n: crash (build/fuzz/$$n.log, build/fuzz/crashes/)"; \
			grep -m3 -E 'ERROR|runtime error|SUMMARY' build/fuzz/$$n.log; \
			failed=$$((failed + 1)); \
		fi; \
	done; \
	echo "# fuzz: $(words $(FUZZ_NAMES)) harnesses, $$failed crashed"; \
	[ $$failed -eq 0 ]

fuzz-smoke:
	KEEP_TEST_STORE=fs bats tests/bats/0840-fuzz-smoke.bats

# make fuzz-determinism  two runs of each harness as the smoke runs it, the
#                        units they add compared (by hand: docs/testing.md)
fuzz-determinism: fuzz-build
	bash fuzz/determinism.sh
