# rdmaprobe: plain make, objects in build/, features detected once.
#
#   make                 build/rdmaprobe and build/librdmaprobe.a
#   make check           unit tests (cmocka), no RDMA device needed
#   make check-clang     the same unit tests built with clang -Werror and ASan+UBSan in build-clang/
#   make test            unit tests (gcc and clang), then the Soft-RoCE VM suite (the README's test command)
#   make fuzz            libFuzzer targets (clang), FUZZ_SECONDS each
#   make SANITIZE=address,undefined check
#   make WERROR=1        warnings are errors (CI sets it)
#   make CUDA=0 MPI=0    build without the optional parts even when present
#   make install         the binary, rdmaprobe(1), the bash completion, the NHC check and the example
#                        fabric models (share/fabric-models, for matrix --transport sim) under DESTDIR/PREFIX
#   make deb-check       build the Debian package in a scratch copy, install it with dpkg --root, run it
#   make rpm-check       lint the RPM spec (rpm/rdmaprobe.spec) with rpmlint and rpmspec -P

BUILD    ?= build
CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -Wvla
ifneq ($(filter 1 true yes,$(WERROR) $(CI)),)
WARN     += -Werror
endif
ifneq ($(SANITIZE),)
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
# +dirty: the sources differ from the commit (a benchmark's binary must not claim a commit it is not)
# (outside a git checkout, a source package: "unknown", with nothing to differ from)
GITREV   := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)$(shell git rev-parse --verify -q HEAD >/dev/null 2>&1 && \
	    { git diff --quiet HEAD -- lib bench Makefile || echo +dirty; })

PKGS     := libibverbs librdmacm jansson
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -libverbs -lrdmacm -ljansson)

CPPFLAGS += -Ilib -D_GNU_SOURCE $(PKG_CFLAGS)
# Dependency files name each object both ways, relative and absolute: a make run with BUILD given
# as an absolute path (test_install's `make install BUILD=...`) rebuilds objects, and a depfile naming
# only /abs/build/x.o would leave a later `make` (BUILD=build) blind to header changes (stale objects).
DEPFLAGS = -MMD -MP -MT $(abspath $@) -MT $(patsubst $(CURDIR)/%,%,$(abspath $@))
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) $(DEPFLAGS)
LDLIBS   += $(PKG_LIBS) -lm -lpthread -ldl

# --- CUDA: detected once; the runtime is linked statically so one binary runs with or without GPUs.
CUDA ?= auto
ifeq ($(CUDA),auto)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null))
HAVE_CUDA := $(if $(and $(CUDA_HOME),$(wildcard $(CUDA_HOME)/include/cuda_runtime_api.h)),1,)
else ifeq ($(CUDA),1)
CUDA_HOME ?= /usr/local/cuda
HAVE_CUDA := 1
endif
ifeq ($(HAVE_CUDA),1)
CPPFLAGS += -DHAVE_CUDA=1 -isystem $(CUDA_HOME)/include
LDLIBS   += -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib -lcudart_static -ldl -lrt
endif

# --- Open MPI (or any MPI with mpicc): only the MPI plugin (lib/job/oob_mpi.c -> rdmaprobe-mpi.so) is
# built against it; the binary never links libmpi and opens the plugin when `matrix` runs.
MPI ?= auto
ifeq ($(MPI),auto)
MPICC := $(shell command -v mpicc 2>/dev/null)
HAVE_MPI := $(if $(MPICC),1,)
else ifeq ($(MPI),1)
MPICC := mpicc
HAVE_MPI := 1
endif
ifeq ($(HAVE_MPI),1)
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null || $(MPICC) -show 2>/dev/null | cut -d' ' -f2- | tr ' ' '\n' | grep '^-I' | tr '\n' ' ')
MPI_LIBS   := $(shell $(MPICC) --showme:link 2>/dev/null || $(MPICC) -show 2>/dev/null | cut -d' ' -f2- | tr ' ' '\n' | grep -E '^-(L|l|Wl)' | tr '\n' ' ')
CPPFLAGS += -DHAVE_MPI=1
endif

# Backends are files of their own: *_cuda.c need CUDA, *_mpi.c need MPI.
LIB_SRC  := $(wildcard lib/*/*.c)
ifneq ($(HAVE_CUDA),1)
LIB_SRC  := $(filter-out %_cuda.c,$(LIB_SRC))
endif
LIB_SRC  := $(filter-out %_mpi.c,$(LIB_SRC))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
MPI_OBJ  := $(BUILD)/mpi/oob_mpi.o
MPI_PLUGIN := $(if $(HAVE_MPI),$(BUILD)/rdmaprobe-mpi.so)
BIN_SRC  := $(wildcard bench/*.c)
BIN_OBJ  := $(BIN_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/*/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_SUPPORT := $(filter-out tests/test_% tests/fuzz_%,$(wildcard tests/*.c))
TEST_SUPPORT_OBJ := $(TEST_SUPPORT:%.c=$(BUILD)/%.o)
FUZZ_SRC := $(wildcard tests/fuzz_*.c)
FUZZ_SECONDS ?= 60

.PHONY: all check check-build check-clang test vm-test vm-selftest deb-check rpm-check fuzz clean features doc install uninstall
.SECONDARY:
all: $(BUILD)/rdmaprobe $(MPI_PLUGIN)

# Objects depend on the flags they were built with: changing SANITIZE, CFLAGS, CUDA or MPI rebuilds.
FLAGS_STAMP := $(BUILD)/.flags
$(shell mkdir -p $(BUILD))
$(file >$(FLAGS_STAMP).new,$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) $(LDLIBS))
$(shell cmp -s $(FLAGS_STAMP).new $(FLAGS_STAMP) || mv -f $(FLAGS_STAMP).new $(FLAGS_STAMP))
VERSION_STAMP := $(BUILD)/.version
$(file >$(VERSION_STAMP).new,$(VERSION) $(GITREV))
$(shell cmp -s $(VERSION_STAMP).new $(VERSION_STAMP) || mv -f $(VERSION_STAMP).new $(VERSION_STAMP))

# Only main.o knows the version, so a new commit rebuilds one file.
$(BUILD)/bench/main.o: CPPFLAGS += -DRP_VERSION='"$(VERSION)"' -DRP_GITREV='"$(GITREV)"'
$(BUILD)/bench/main.o: $(VERSION_STAMP)

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/librdmaprobe.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# -rdynamic: the MPI plugin calls back into the binary (lib/base/log.h, rp_now).
$(BUILD)/rdmaprobe: $(BIN_OBJ) $(BUILD)/librdmaprobe.a
	$(CC) $(ALL_CFLAGS) -rdynamic -o $@ $(BIN_OBJ) $(BUILD)/librdmaprobe.a $(LDFLAGS) $(LDLIBS)

# The MPI plugin: lib/job/oob_mpi.c against the MPI found at build time (position-independent, so that
# the same object also links into tests/job/test_oob_mpi).
$(BUILD)/lib/job/mpi_plugin.o: CPPFLAGS += -DRP_PLUGINDIR='"$(PLUGINDIR)"'
$(MPI_OBJ): lib/job/oob_mpi.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(MPI_CFLAGS) $(ALL_CFLAGS) -fPIC -c $< -o $@

$(BUILD)/rdmaprobe-mpi.so: $(MPI_OBJ)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $< $(LDFLAGS) $(MPI_LIBS) -lpthread

$(BUILD)/tests/job/test_oob_mpi.o: CPPFLAGS += $(MPI_CFLAGS)
$(BUILD)/tests/job/test_oob_mpi: $(if $(HAVE_MPI),$(MPI_OBJ))
$(BUILD)/tests/job/test_oob_mpi: TEST_EXTRA = $(if $(HAVE_MPI),$(MPI_OBJ) $(MPI_LIBS))

# The front end's signal handling and its watchdog (bench/signals.c) under test.
$(BUILD)/tests/cli/test_signals: $(BUILD)/bench/signals.o
$(BUILD)/tests/cli/test_signals: TEST_EXTRA = $(BUILD)/bench/signals.o
$(BUILD)/tests/cli/test_signals.o: CPPFLAGS += -Ibench

# Tests mirror lib/'s folders (tests/engine/test_engine.c) and include their support files from tests/.
$(BUILD)/tests/%.o: CPPFLAGS += -Itests

# A test may name the functions it wraps in tests/<name>.wrap (linker flags, e.g. -Wl,--wrap=ibv_open_device).
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_SUPPORT_OBJ) $(BUILD)/librdmaprobe.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(TEST_EXTRA) $(TEST_SUPPORT_OBJ) $(BUILD)/librdmaprobe.a \
	    $(shell cat tests/$*.wrap 2>/dev/null) $(LDFLAGS) $(LDLIBS) $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

# The GPU host check's program (scripts/gpu-host-check.sh); not part of 'all'.
$(BUILD)/gpucheck: $(BUILD)/scripts/gpucheck.o $(BUILD)/librdmaprobe.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/librdmaprobe.a $(LDFLAGS) $(LDLIBS)

# The man page and the bash completion come from the built binary's own option tables
# (rdmaprobe --commands, COMMAND --help=man / --help=list), so they cannot drift from --help.
# The page's date: SOURCE_DATE_EPOCH (dpkg-buildpackage sets it from debian/changelog), else the commit's.
MAN_DATE := $(shell if [ -n "$$SOURCE_DATE_EPOCH" ]; then date -u -d "@$$SOURCE_DATE_EPOCH" +%Y-%m-%d; \
	else git log -1 --format=%cs 2>/dev/null || date -u +%Y-%m-%d; fi)
DOC := $(BUILD)/rdmaprobe.1 $(BUILD)/rdmaprobe.bash
doc: $(DOC)

$(BUILD)/rdmaprobe.1: doc/rdmaprobe.1.in scripts/gen-man.sh $(BUILD)/rdmaprobe
	sh scripts/gen-man.sh $(BUILD)/rdmaprobe $< '$(VERSION)' '$(MAN_DATE)' >$@.tmp && mv -f $@.tmp $@

$(BUILD)/rdmaprobe.bash: scripts/gen-completion.sh $(BUILD)/rdmaprobe
	sh scripts/gen-completion.sh $(BUILD)/rdmaprobe >$@.tmp && mv -f $@.tmp $@

# make install [PREFIX=/usr/local] [DESTDIR=/staging]: GNU's directory variables, overridable one by one.
PREFIX      ?= /usr/local
PLUGINDIR   ?= $(PREFIX)/lib/rdmaprobe
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
COMPDIR     ?= $(PREFIX)/share/bash-completion/completions
DATADIR     ?= $(PREFIX)/share/rdmaprobe
INSTALL     ?= install
MODELS      := $(wildcard share/fabric-models/*.model)
INSTALLED   := $(BINDIR)/rdmaprobe $(MANDIR)/man1/rdmaprobe.1 $(COMPDIR)/rdmaprobe $(PLUGINDIR)/rdmaprobe-mpi.so \
	       $(DATADIR)/rdmaprobe.nhc $(MODELS:share/%=$(DATADIR)/%)

install: $(BUILD)/rdmaprobe $(MPI_PLUGIN) $(DOC)
	$(INSTALL) -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(MANDIR)/man1' '$(DESTDIR)$(COMPDIR)' '$(DESTDIR)$(DATADIR)'
	$(INSTALL) -m 0755 $(BUILD)/rdmaprobe '$(DESTDIR)$(BINDIR)/rdmaprobe'
	$(if $(MPI_PLUGIN),$(INSTALL) -d '$(DESTDIR)$(PLUGINDIR)' && \
	    $(INSTALL) -m 0644 $(MPI_PLUGIN) '$(DESTDIR)$(PLUGINDIR)/rdmaprobe-mpi.so')
	$(INSTALL) -m 0644 $(BUILD)/rdmaprobe.1 '$(DESTDIR)$(MANDIR)/man1/rdmaprobe.1'
	$(INSTALL) -m 0644 $(BUILD)/rdmaprobe.bash '$(DESTDIR)$(COMPDIR)/rdmaprobe'
	$(INSTALL) -m 0644 scripts/nhc/rdmaprobe.nhc '$(DESTDIR)$(DATADIR)/rdmaprobe.nhc'
	$(INSTALL) -d '$(DESTDIR)$(DATADIR)/fabric-models'
	$(INSTALL) -m 0644 $(MODELS) '$(DESTDIR)$(DATADIR)/fabric-models/'

uninstall:
	rm -f $(foreach f,$(INSTALLED),'$(DESTDIR)$(f)')

# The synthetic matrix page generator (scripts/html-scale.sh, the HTML report's screenshots); built by check.
$(BUILD)/scripts/html_synth.o: CPPFLAGS += -Itests
$(BUILD)/html-synth: $(BUILD)/scripts/html_synth.o $(BUILD)/tests/mx_view.o $(BUILD)/librdmaprobe.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# A simulated fabric's topology file (scripts/bench-localize.sh); built by check.
$(BUILD)/sim-topology: $(BUILD)/scripts/sim_topology.o $(BUILD)/librdmaprobe.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# The localization scorer's scenarios (scripts/bench-localize.sh); built by check.
$(BUILD)/localize-score: $(BUILD)/scripts/localize_score.o $(BUILD)/librdmaprobe.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# Unit tests: every test binary runs, JOBS at a time (scripts/run-unit-tests.sh: each one's output
# shown whole, in order); the run fails if any fails. What they need is built first, on every core
# (JOBS) unless the caller gave -j itself (make test's targets run one after another, but each build
# and test run inside them in parallel: the README's `make test` is a plain make).
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
check-build: $(TEST_BIN) $(BUILD)/rdmaprobe $(MPI_PLUGIN) $(DOC) $(BUILD)/html-synth $(BUILD)/sim-topology $(BUILD)/localize-score

check:
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS)) check-build
	sh scripts/check-layers.sh
	@if bash scripts/run-unit-tests.sh $(JOBS) $(abspath $(BUILD)/rdmaprobe) $(TEST_BIN); then \
	    echo "unit tests passed"; else echo "unit tests FAILED"; exit 1; fi

# The second compiler: every warning an error, objects apart (build-clang/), its unit tests run too,
# built with AddressSanitizer and UndefinedBehaviorSanitizer (any report fails the test that hit it):
# one build finds both a compiler's warnings and memory or UB errors (CLANG_SANITIZE= turns them off).
CLANG_BUILD ?= build-clang
CLANG_SANITIZE ?= address,undefined
check-clang:
	$(MAKE) --no-print-directory BUILD=$(CLANG_BUILD) CC="$(or $(CLANG),clang)" WERROR=1 SANITIZE=$(CLANG_SANITIZE) check

# The README's test command: unit tests with both compilers, then real Soft-RoCE devices in a VM.
test: check check-clang vm-test vm-selftest deb-check rpm-check

deb-check:
	sh scripts/deb-check.sh

rpm-check:
	sh scripts/rpm-check.sh

vm-test: $(BUILD)/rdmaprobe
	RP_BIN=$(abspath $(BUILD)/rdmaprobe) bash scripts/testbed/run-suite.sh

# The suite runner's own check: a kernel crash or a hang in the guest ends its boot, is named, is
# rerun once, and the cases after it go on (five short boots).
vm-selftest: $(BUILD)/rdmaprobe
	RP_BIN=$(abspath $(BUILD)/rdmaprobe) bash scripts/testbed/selftest.sh

fuzz:
	$(MAKE) BUILD=$(BUILD)/fuzz CC=clang SANITIZE=address,undefined CUDA=0 MPI=0 CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" $(BUILD)/fuzz/librdmaprobe.a
	@for f in $(FUZZ_SRC); do n=$$(basename $$f .c); \
	    clang $(CPPFLAGS) -std=gnu11 -O1 -g -fsanitize=fuzzer,address,undefined $$f $(BUILD)/fuzz/librdmaprobe.a $(PKG_LIBS) -lm -lpthread -o $(BUILD)/fuzz/$$n || exit 1; \
	    echo "== $$n ($(FUZZ_SECONDS) s)"; mkdir -p $(BUILD)/fuzz/corpus-$$n; \
	    $(BUILD)/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $(BUILD)/fuzz/corpus-$$n || exit 1; done

features:
	@echo "cuda=$(if $(HAVE_CUDA),yes ($(CUDA_HOME)),no) mpi=$(if $(HAVE_MPI),yes,no)"

clean:
	rm -rf $(BUILD)/*.a $(BUILD)/rdmaprobe $(DOC) $(BUILD)/lib $(BUILD)/bench $(BUILD)/tests $(BUILD)/fuzz $(BUILD)/scripts $(BUILD)/gpucheck
	rm -rf $(BUILD)/*.a $(BUILD)/rdmaprobe $(BUILD)/lib $(BUILD)/bench $(BUILD)/tests $(BUILD)/fuzz $(BUILD)/scripts $(BUILD)/gpucheck $(BUILD)/html-synth $(BUILD)/sim-topology $(BUILD)/localize-score
	rm -rf $(BUILD)/mpi $(BUILD)/rdmaprobe-mpi.so

-include $(MPI_OBJ:.o=.d) $(LIB_OBJ:.o=.d) $(BIN_OBJ:.o=.d) $(TEST_BIN:=.d) $(TEST_SUPPORT_OBJ:.o=.d) $(BUILD)/scripts/gpucheck.d $(BUILD)/scripts/html_synth.d $(BUILD)/scripts/sim_topology.d $(BUILD)/scripts/localize_score.d
