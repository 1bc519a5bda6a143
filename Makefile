# Checkers proof system - top-level Makefile (plain make, no generator).
#
#   make                      build bin/checkers and one static library per module
#   make run                  the main job: make prove (a three-move opening)
#   make prove OPENING="..."  prove an opening with local workers (resumable)
#   make demo                 a small proof through the whole system
#   make test                 unit suites (release build), the same suites under
#                             AddressSanitizer+UBSan, the end-to-end checks and the
#                             structure of manager/ and web/ (tests/deps_check.sh)
#   make test-slurm           the Slurm batch script on a one-node cluster (root; not in make test)
#   make bench                benchmarks (bench/), each against a same-run baseline
#   make format               clang-format every source file
#   make SANITIZE=address,undefined ...   sanitized build (objects in build-san/)
#
# Missing Debian packages are installed first by scripts/install-deps.sh.

# ---- variables -----------------------------------------------------------

CC       ?= cc
ARCH     ?= -march=native
OPT      ?= -O3
SANITIZE ?=

DEPS_PKGS := libevent lmdb libxxhash cmocka zlib nettle

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
        -Wmissing-prototypes -Wpointer-arith -Wformat=2 -Wvla

ifeq ($(SANITIZE),)
  BUILD   := build
  SANFLAG :=
else
  BUILD   := build-san
  SANFLAG := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
  OPT     := -O1 -g
endif

BIN := bin
# pkg-config is queried lazily: on a fresh machine it only exists after the
# dependency step has run.
PKG_CFLAGS = $(shell pkg-config --cflags $(DEPS_PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(DEPS_PKGS) 2>/dev/null)

CPPFLAGS := -I. -D_GNU_SOURCE
CFLAGS   := $(WARN) $(OPT) $(ARCH) -g $(SANFLAG) -MMD -MP
LDFLAGS  := $(SANFLAG)
LDLIBS    = $(PKG_LIBS) -lpthread -lm

# Modules, in dependency order (a module may use those before it).
# errors/ (ck_strerror, the table of every module's error range) names
# the codes of every module, web/ included, so it comes last.
MODULES := engine openings egdb prover manager web errors
MOD_SRCS = $(wildcard $(1)/*.c)
LIBS := $(foreach m,$(MODULES),$(if $(call MOD_SRCS,$(m)),$(BUILD)/lib$(m).a))
# Link order: users before what they use.
LINKLIBS := $(foreach m,errors web manager prover egdb openings engine,$(filter $(BUILD)/lib$(m).a,$(LIBS)))

CLI_SRCS   := $(wildcard cli/*.c)
TEST_SRCS  := $(wildcard tests/test_*.c)
TEST_BINS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
# Helper programs of the end-to-end tests (tests/e2e_*.sh), not suites.
TOOL_SRCS  := tests/forge_worker.c
TOOL_BINS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TOOL_SRCS))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
# benchmarks too long for `make bench` (each says how to run it)
BENCH_BY_HAND := bench/hard.sh bench/load.sh bench/scaling.sh bench/ghiorder.sh bench/leafnums.sh \
                 bench/dfpnrate.sh bench/prove_vs_solve.sh bench/egdb_build7.sh \
                 bench/kill-manager.sh bench/partial-9-10.sh bench/level-2-8.sh bench/prove_lib.sh \
                 bench/egdb_damage8.sh bench/egdb-stats-8.sh bench/egdb_partial_speed.sh \
                 bench/egdb_bench_lib.sh

ALL_SRCS := $(foreach m,$(MODULES),$(call MOD_SRCS,$(m))) $(CLI_SRCS) $(TEST_SRCS) $(TOOL_SRCS) \
            $(BENCH_SRCS)
OBJS := $(patsubst %.c,$(BUILD)/%.o,$(ALL_SRCS))

CHECKERS := $(if $(SANITIZE),$(BUILD)/checkers,$(BIN)/checkers)

# ---- targets -------------------------------------------------------------

.PHONY: all deps run prove egdb compare frontier level demo demo-quick test test-unit test-san test-e2e test-slurm testdata check-solve6 bench format clean
.DEFAULT_GOAL := all

all: deps $(CHECKERS) $(LIBS)

deps:
	@./scripts/install-deps.sh

# The main job (the README's first command): prove a three-move opening
# with local workers, resumable. OPENING, GOAL (for the side to move after
# the opening: White), PIECES (databases), STATE and PROVE_ARGS (more
# options of `checkers prove`, e.g. --budget 2h --status-port 8080) may be
# set on the command line. Run again, it resumes; Ctrl-C stops it cleanly.
OPENING ?= 12-16 24-19 10-14
GOAL ?= >=draw
PIECES ?= 6
EGDB ?= egdb-data
STATE ?= proofs/$(subst $(eval) ,_,$(OPENING))
PROVE_ARGS ?=

run: prove

prove: all
	@./scripts/ensure-egdb.sh $(EGDB) $(PIECES) ./$(BIN)/checkers
	@[ -d "$(STATE)/state" ] || [ -d "$(STATE)/tree" ] || ./scripts/first-start.sh "$(OPENING)" "$(STATE)"
	@echo "== proving \"$(OPENING)\" (goal $(GOAL) for White, to move), state in $(STATE)"
	@# exit 1 is a clean stop (budget, Ctrl-C): resumable, not a failure of make
	./$(BIN)/checkers prove --opening "$(OPENING)" --goal '$(GOAL)' --state "$(STATE)" \
	    --db $(EGDB) $(PROVE_ARGS); rc=$$?; [ $$rc -le 1 ] || exit $$rc

# The endgame databases alone: build (or resume) 1-PIECES into EGDB, then
# verify every file and every position. `make egdb PIECES=7` is the 1-7
# piece set: 34.8 billion positions, 10 GB of build files and a compressed
# copy, hours on 2 cores (docs/egdb.md, "Seven pieces"); Ctrl-C stops it
# and the next run resumes. `make egdb PIECES=8` goes on with the 8-piece
# splits (4v4 first; SPLITS=4v4 for that one alone), each built material
# by material and kept compressed (docs/egdb.md, "Eight pieces").
egdb: all
	@./scripts/ensure-egdb.sh $(EGDB) $(PIECES) ./$(BIN)/checkers
	./$(BIN)/checkers egdb verify --db $(EGDB)

# The comparison with the 2007 table: each of the 19 published openings
# proved (or resumed) for BUDGET with the goal the table claims, then
# results/compare-19.md, .csv and .svg (checkers compare). OPENINGS=1,4-6
# proves and compares only those openings.
BUDGET ?= 60s
compare: all
	@./scripts/ensure-egdb.sh $(EGDB) $(PIECES) ./$(BIN)/checkers
	./scripts/prove-19.sh $(BUDGET) $(EGDB) ./$(BIN)/checkers $(PROVE_ARGS)

# The provability frontier: the ladder's rungs proved for BUDGET each, then
# results/frontier.md, .tsv and .svg (checkers frontier run; resumable).
FRONTIER_ARGS ?=
frontier: all
	@./scripts/ensure-egdb.sh $(EGDB) $(PIECES) ./$(BIN)/checkers
	./$(BIN)/checkers frontier run --db $(EGDB) --pieces $(PIECES) --budget $(BUDGET) \
	    $(FRONTIER_ARGS)

# The level ladder (openings/level.tsv: level positions of 10-16 pieces):
# every rung proved for BUDGET with two local workers, then
# results/level-2-N/frontier.md, .tsv and .svg (N: PIECES, the databases
# used, default 6, whatever else EGDB holds; resumable). The baseline the
# draw-proving work is measured against: 60 s, 2 workers, every rung
# (--all).
level: all
	@./scripts/ensure-egdb.sh $(EGDB) $(PIECES) ./$(BIN)/checkers
	./$(BIN)/checkers frontier run --ladder level --db $(EGDB) --pieces $(PIECES) \
	    --budget $(BUDGET) --workers 2 --all $(FRONTIER_ARGS)

# The deepest ladder rung this machine proves in under five minutes
# (results/frontier.md: opening 14's 14-piece rung, a loss for Black to
# move, proved in 11 s of its 60 s), through the manager, two local
# workers, the 1-6 piece databases and LMDB, then checked from scratch by
# `proof check`. Needs the 1-6 databases (built first if missing, about
# 10 minutes). `make demo-quick` is a 5-piece ending with the 1-5
# databases (seconds).
DEMO_FEN := B:W12,21,24,25,27,31,32,K4:B3,6,14,15,18,20
demo: all
	@./scripts/ensure-egdb.sh $(EGDB) 6 ./$(BIN)/checkers
	@rm -rf build/demo
	@echo "== proving opening 14's 14-piece ladder rung ($(DEMO_FEN)), at most 5 minutes"
	./$(BIN)/checkers prove --fen '$(DEMO_FEN)' --state build/demo --db $(EGDB) \
	    --workers 2 --job-time 5 --budget 5m
	./$(BIN)/checkers proof check --state build/demo --db $(EGDB)

demo-quick: all
	@./scripts/ensure-egdb.sh $(EGDB) 5 ./$(BIN)/checkers
	@rm -rf build/demo-quick
	./$(BIN)/checkers prove --fen 'B:W30,31,K19:B6,K12' --state build/demo-quick --db $(EGDB) \
	    --pieces 4 --workers 2 --job-nodes 3000
	./$(BIN)/checkers proof check --state build/demo-quick --db $(EGDB)

# The engine's version, recorded with the seed lines it makes.
$(BUILD)/cli/openings_cmds.o $(BUILD)/cli/frontier_cmds.o: CPPFLAGS += -DCHECKERS_VERSION='"$(shell git describe --always --dirty 2>/dev/null || echo unknown)"'

$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) -c $< -o $@

define MODULE_LIB
$(BUILD)/lib$(1).a: $(patsubst %.c,$(BUILD)/%.o,$(call MOD_SRCS,$(1)))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach m,$(MODULES),$(if $(call MOD_SRCS,$(m)),$(eval $(call MODULE_LIB,$(m)))))

$(CHECKERS): $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRCS)) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LINKLIBS) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIBS)
	$(CC) $(LDFLAGS) -o $@ $< $(LINKLIBS) $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIBS)
	$(CC) $(LDFLAGS) -o $@ $< $(LINKLIBS) $(LDLIBS)

# The whole test command: release suites, sanitized suites, end-to-end.
# Everything is built first (both builds, two jobs at a time); then the
# suites run two at a time (one per core), each one's output printed
# whole when it ends. Every check waits on events, so a suite's verdict
# does not depend on what runs beside it.
TEST_JOBS ?= 2
UNIT_RUNS := $(patsubst tests/%.c,run-unit-%,$(TEST_SRCS))
SAN_RUNS  := $(patsubst tests/%.c,run-san-%,$(TEST_SRCS))
E2E_RUNS  := $(patsubst tests/%.sh,run-e2e-%,$(wildcard tests/e2e_*.sh))
# end-to-end scripts also run with the sanitized program: the damaged
# states (LMDB's faults on damaged pages are caught by the program's guard)
# and the certificates (damaged files parsed by the C check)
SAN_E2E_RUNS := run-san-e2e-e2e_damaged_state run-san-e2e-e2e_cert
.PHONY: test-bins test-runs run-deps-check $(UNIT_RUNS) $(SAN_RUNS) $(E2E_RUNS) $(SAN_E2E_RUNS)

test: deps
	$(MAKE) --no-print-directory -j$(TEST_JOBS) all test-bins
	$(MAKE) --no-print-directory testdata
	$(MAKE) --no-print-directory -j$(TEST_JOBS) SANITIZE=address,undefined test-bins build-san/checkers
	$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target test-runs

# The suites and tools of this build (build/ or, with SANITIZE, build-san/).
test-bins: $(TEST_BINS) $(TOOL_BINS)

# The slowest first, so that the two lanes end together.
test-runs: run-deps-check $(SAN_RUNS) $(E2E_RUNS) $(SAN_E2E_RUNS) $(UNIT_RUNS)

# Each suite ends with a line giving its wall time (TIMED).
TIMED = t0=$$(date +%s%N); $(1); rc=$$?; \
	echo "-- $(2): $$(( ($$(date +%s%N) - t0) / 1000000 )) ms, exit $$rc"; exit $$rc
# The structure of manager/ and web/, from this build's objects: no call
# cycle between files, web/ above manager/, no function over 100 lines
# without a reason, each file saying what it owns and calls (seconds).
run-deps-check:
	@echo "== tests/deps_check.sh"; $(call TIMED,bash tests/deps_check.sh $(BUILD),tests/deps_check.sh)
$(UNIT_RUNS): run-unit-%:
	@echo "== build/tests/$*"; $(call TIMED,./build/tests/$*,build/tests/$*)
$(SAN_RUNS): run-san-%:
	@echo "== build-san/tests/$* (sanitized)"; \
	    $(call TIMED,CHECKERS_SANITIZED=1 ./build-san/tests/$*,build-san/tests/$*)
$(SAN_E2E_RUNS): run-san-e2e-%:
	@echo "== tests/$*.sh (sanitized checkers)"; \
	    $(call TIMED,CHECKERS=$(CURDIR)/build-san/checkers CHECKERS_SANITIZED=1 TOOLS=$(CURDIR)/build/tests bash tests/$*.sh,tests/$*.sh (sanitized))
$(E2E_RUNS): run-e2e-%:
	@echo "== tests/$*.sh"; \
	    $(call TIMED,CHECKERS=$(CURDIR)/$(BIN)/checkers TOOLS=$(CURDIR)/build/tests bash tests/$*.sh,tests/$*.sh)

# The 1-5 piece databases the solver suites share (built once, about a minute,
# by the release binary whatever SANITIZE says; a finished build is a no-op).
TESTDB := $(CURDIR)/build/testdata/egdb5
export CHECKERS_TEST_DB := $(TESTDB)

testdata: deps
	@$(MAKE) --no-print-directory SANITIZE= $(BIN)/checkers
	@mkdir -p $(dir $(TESTDB))
	@[ -f $(TESTDB)/.complete ] || { ./$(BIN)/checkers egdb build --pieces 5 --dir $(TESTDB) >/dev/null && touch $(TESTDB)/.complete; }

test-unit: $(TEST_BINS) testdata
	@set -e; for t in $(TEST_BINS); do echo "== $$t"; ./$$t; done

# Under the sanitizers the slowest checks are scaled down by the suites
# themselves (they read CHECKERS_SANITIZED).
test-san: $(TEST_BINS) $(CHECKERS) testdata
	@set -e; for t in $(TEST_BINS); do echo "== $$t (sanitized)"; CHECKERS_SANITIZED=1 ./$$t; done

test-e2e: all testdata $(TOOL_BINS)
	@set -e; for t in tests/e2e_*.sh; do [ -f "$$t" ] || continue; \
	    echo "== $$t"; CHECKERS=$(CURDIR)/$(BIN)/checkers TOOLS=$(CURDIR)/$(BUILD)/tests bash $$t; done

# The solver against the 6-piece databases (slower; run and reported, not
# part of `make test`): needs the 1-6 piece databases in egdb-data.
check-solve6: $(BUILD)/tests/test_prover_dfpn
	CHECKERS_TEST_DB=$(CURDIR)/egdb-data CHECKERS_SOLVE_PIECES=6 \
	    CHECKERS_SOLVE_SAMPLE=$${SAMPLE:-500} ./$(BUILD)/tests/test_prover_dfpn

# scripts/slurm-prove.sbatch on a one-node Slurm cluster made on this
# machine (tests/slurm_test.sh): root only, installs Debian's slurm-wlm and
# munge when missing, starts and stops its own daemons; about a minute.
# Not part of `make test`.
test-slurm: all testdata
	CHECKERS=$(CURDIR)/$(BIN)/checkers bash tests/slurm_test.sh

bench: all $(BENCH_BINS) testdata
	@set -e; for b in $(BENCH_BINS); do echo "== $$b"; ./$$b; done
	@set -e; for b in $(filter-out $(BENCH_BY_HAND),$(wildcard bench/*.sh)); do echo "== $$b"; \
	    CHECKERS=$(CURDIR)/$(BIN)/checkers bash $$b; done

format:
	clang-format -i $(ALL_SRCS) $(wildcard */*.h)

clean:
	rm -rf build build-san $(BIN)

-include $(OBJS:.o=.d)
