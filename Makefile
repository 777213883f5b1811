# iotracer build. `make deps` once (apt-get, idempotent), then `make`.
# Targets: all deps deps-test deb deps-arm64 static-arm64 run test unit integration fuzz fuzz-build lab
#          vmlinux format githooks clean tools replay-bench static install uninstall
#          (install: PREFIX, DESTDIR, SYSCONFDIR)
# Variables: V=1 for full command lines; DEBUG=1 for -O0 -g.

OUTPUT      := build
CLANG       ?= clang
BPFTOOL     ?= bpftool
CC          ?= gcc
ARCH        := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VERSION     := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GITREV      := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

CFLAGS      ?= -O2 -g
CFLAGS      += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 \
	       -Iinclude -Isrc -I$(OUTPUT) -D_GNU_SOURCE
ifeq ($(DEBUG),1)
CFLAGS      += -O0
endif
# libinih: the config file reader (src/service/config.c); libzstd: --sink's compression
# (src/sink/compress.c). libcurl, --sink's HTTP client, is not linked: src/sink/curldl.c
# loads it with dlopen at --sink only (its ~25 libraries cost every daemon RssAnon:
# docs/bench.md); its headers give the types (libcurl4-openssl-dev).
PURE_LIBS   := -linih -lelf -lsodium -lz -lm -lzstd
LDLIBS      := -lbpf $(PURE_LIBS) -lpthread
BPF_CFLAGS  := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Iinclude -Ibpf \
	       -Wall -Wno-unused-function -Wno-compare-distinct-pointer-types

ifneq ($(V),1)
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Sources by folder (docs/architecture.md, "Folder map"). Objects mirror the tree
# under build/obj; each gets its own header dependencies from the compiler (-MMD).
SRCS        := $(wildcard src/*.c src/*/*.c)
OBJS        := $(patsubst src/%.c,$(OUTPUT)/obj/%.o,$(SRCS))
# Pure user-space modules (no libbpf, no skeleton): unit-tested under ASan/UBSan and
# linked into the tools. What talks to libbpf stays out.
LOADER_SRCS := src/load/loader.c src/load/hooktab.c src/load/methods.c src/load/hookreport.c \
	       src/load/mapped.c
LIBBPF_SRCS := src/main.c $(LOADER_SRCS) src/load/kfeat.c src/load/filters.c src/load/aggmap.c \
	       src/load/blkstale.c src/service/daemon.c src/service/daemon_bpf.c \
	       src/service/daemon_metrics.c src/service/daemon_reload.c src/service/dnames.c \
	       src/top/top.c \
	       src/mode/host.c src/mode/hprobe.c src/mode/guest.c src/mode/guestgpa.c \
	       src/bench/cmd.c src/bench/run.c src/bench/bpfstats.c
# The static build (lab guests) compiles the sink's HTTP client and its loader with
# -DIT_NO_CURL: no --sink (libcurl's TLS and protocol libraries have no static builds
# in Debian; docs/fleet.md).
CURL_SRCS   := src/sink/http.c src/sink/curldl.c
PURE_SRCS   := $(filter-out $(LIBBPF_SRCS),$(SRCS))
STATIC_OBJS := $(filter-out $(patsubst src/%.c,$(OUTPUT)/obj/%.o,$(CURL_SRCS)),$(OBJS)) \
	       $(patsubst src/%.c,$(OUTPUT)/static/%.o,$(CURL_SRCS))
PURE_OBJS   := $(patsubst src/%.c,$(OUTPUT)/pure/%.o,$(PURE_SRCS))
SAN_OBJS    := $(patsubst src/%.c,$(OUTPUT)/san/%.o,$(PURE_SRCS))
BPF_SRCS    := $(wildcard bpf/*.bpf.c)
BPF_OBJS    := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS       := $(OUTPUT)/iotracer.skel.h $(OUTPUT)/iotracer_compat.skel.h
UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
UNIT_BINS   := $(patsubst tests/unit/%.c,$(OUTPUT)/unit/%,$(UNIT_SRCS))
TOOLS       := $(OUTPUT)/replay_bench $(OUTPUT)/bench_output $(OUTPUT)/link_peer \
	       $(OUTPUT)/compat_syscall $(OUTPUT)/bpf_stats_hold $(OUTPUT)/nonfile_io \
	       $(OUTPUT)/tax_floor $(OUTPUT)/blame_bench $(OUTPUT)/sink_bench $(OUTPUT)/sink_fixture
SAN_FLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
VMLINUX     := vmlinux/$(ARCH)/vmlinux.h

# Debian 12 packages, by what needs them (docs/package.md). `make deps` installs what
# building and running need (`make run` on a fresh machine); `make test` adds the test
# tools itself (deps-test); a traced host that installs the package gets only DEPS_RUN.
DEPS_BUILD  := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev pkg-config make \
	       gcc libsodium-dev libinih-dev dpkg-dev libcurl4-openssl-dev
DEPS_RUN    := libbpf1 libelf1 zlib1g libsodium23 libinih1 libcurl4 libzstd1
# Copied into the lab guests with the libraries ldd names (tests/lab/test_stacks.sh): the
# stacks' userland (this host has no device mapper or md of its own)
DEPS_GUEST  := dmsetup mdadm
DEPS_TEST   := clang-format fio jq util-linux e2fsprogs procps libaio-dev liburing-dev bpftrace systemd strace \
	       groff-base man-db prometheus curl qemu-system-x86 libclang-rt-dev lintian \
	       chromium python3 tmux libbpf-tools nodejs blktrace podman runc busybox-static postgresql \
	       clickhouse-server clickhouse-client mmdebstrap openssl $(DEPS_GUEST)

.PHONY: all deps deps-test deb deps-arm64 static-arm64 run test unit integration fuzz fuzz-build fuzz-bins lab \
	vmlinux format githooks clean tools replay-bench static install uninstall

all: iotracer

NPROC       := $(shell nproc 2>/dev/null || echo 1)

# apt_install NAME, PACKAGES, APT-OPTIONS: install the PACKAGES not installed yet (idempotent).
define apt_install
	@missing=$$(for p in $(2); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(3) $$missing; \
	else echo "$(1): all installed"; fi
endef

deps:
	$(call apt_install,deps,$(DEPS_BUILD) $(DEPS_RUN))

# the test tools: fio, Prometheus, QEMU for the lab, lintian, a browser (~400 MB), node,
# blktrace (blkparse and btt here, blktrace itself in the lab guest: tests/lab/test_btt.sh),
# podman, runc (crun refuses hybrid cgroup hosts) and busybox-static (a local image from a
# rootfs tarball: tests/integration/test_podman.sh), postgresql (its server and pgbench:
# tests/integration/test_postgres.sh).
# npm (to fetch Chrome DevTools' trace engine for test_record) only when no npm is there:
# a nodejs that ships its own npm (NodeSource's) conflicts with Debian's npm package.
deps-test:
	$(call apt_install,deps-test,$(DEPS_TEST),--no-install-recommends)
	@command -v npm >/dev/null || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm; }

# Cross build for arm64 lab guests (docs/lab.md, "arm64"): a cross compiler, and the
# arm64 static libraries through Debian multiarch. `dpkg --add-architecture arm64`
# changes this machine's dpkg configuration: done here, once, so a fresh machine
# gets it from `make deps-arm64` too.
DEPS_ARM64  := gcc-aarch64-linux-gnu libc6-dev-arm64-cross libbpf-dev:arm64 libelf-dev:arm64 \
	       zlib1g-dev:arm64 libzstd-dev:arm64 libsodium-dev:arm64 libinih-dev:arm64 qemu-system-arm
# The static daemon and test_link for arm64 lab guests (after make deps-arm64),
# from vmlinux/arm64/vmlinux.h, in build/arm64/.
static-arm64:
	$(Q)$(MAKE) -s ARCH=arm64 CC=aarch64-linux-gnu-gcc OUTPUT=$(OUTPUT)/arm64 \
		$(OUTPUT)/arm64/iotracer.static $(OUTPUT)/arm64/test_link.static
deps-arm64:
	@dpkg --print-foreign-architectures | grep -qx arm64 || \
		{ echo "dpkg --add-architecture arm64"; dpkg --add-architecture arm64 && apt-get update -qq; }
	@missing=$$(for p in $(DEPS_ARM64); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $$missing; }; \
	else echo "deps-arm64: all installed"; fi

$(OUTPUT) $(OUTPUT)/unit:
	$(Q)mkdir -p $@

# The version string, in one generated header rewritten only when it changes:
# every object that prints it (through -MMD) is rebuilt with it, so a binary and
# its unit tests never carry two revisions.
$(OUTPUT)/version.h: FORCE | $(OUTPUT)
	@printf '#define IT_VERSION "%s (%s)"\n' '$(VERSION)' '$(GITREV)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@

FORCE:

# BPF objects -> one linked object -> skeleton. The BPF side has no -MMD (the
# headers are few and every program is in one unit).
$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.bpf.h) include/iotracer.h $(VMLINUX) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Line info dropped from the linked objects' .BTF.ext (tools/btfext_noline.c: libbpf
# keeps a copy of the section for the daemon's life, 93 % of it line info);
# BPF_LINE_INFO=1 keeps it, for verifier logs with source lines.
ifeq ($(BPF_LINE_INFO),1)
NOLINE      :=
else
NOLINE       = $(OUTPUT)/btfext_noline $@
endif
$(OUTPUT)/btfext_noline: tools/btfext_noline.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $< -lelf -o $@

$(OUTPUT)/iotracer.linked.o: $(BPF_OBJS) $(OUTPUT)/btfext_noline
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $(BPF_OBJS)
	$(Q)$(NOLINE)

$(OUTPUT)/iotracer.skel.h: $(OUTPUT)/iotracer.linked.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name iotracer_bpf > $@

# The same programs for kernels without BPF xchg (before 5.12), whose verifier
# rejects the instruction even in dead code: IT_BPF_COMPAT (bpf/core_fixes.bpf.h).
# The loader opens it in the main skeleton's layout (loader.c open_skel).
$(OUTPUT)/%.compat.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.bpf.h) include/iotracer.h $(VMLINUX) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DIT_BPF_COMPAT -c $< -o $@

$(OUTPUT)/iotracer_compat.linked.o: $(patsubst %.bpf.o,%.compat.bpf.o,$(BPF_OBJS)) \
		$(OUTPUT)/btfext_noline
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $(patsubst %.bpf.o,%.compat.bpf.o,$(BPF_OBJS))
	$(Q)$(NOLINE)

$(OUTPUT)/iotracer_compat.skel.h: $(OUTPUT)/iotracer_compat.linked.o $(OUTPUT)/iotracer.linked.o
	$(call msg,SKEL,$@)
	$(Q)tools/same_layout.sh $(OUTPUT)/iotracer.linked.o $<
	$(Q)$(BPFTOOL) gen skeleton $< name iotracer_compat_bpf > $@

# Daemon objects. The skeleton is an order-only prerequisite so that it exists
# before the first compile; the objects that include it depend on it through -MMD.
$(OUTPUT)/obj/%.o: src/%.c | $(SKELS) $(OUTPUT)/version.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# The same pure modules for the tools (no skeleton needed) and under sanitizers.
$(OUTPUT)/pure/%.o: src/%.c | $(OUTPUT)/version.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)/san/%.o: src/%.c | $(OUTPUT)/version.h
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -O2,$(CFLAGS)) -O1 $(SAN_FLAGS) -MMD -MP -c $< -o $@

iotracer: $(OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# Static builds for the lab's guests (tests/lab/harness.sh): the daemon, and the
# link unit test without sanitizers (AF_VSOCK inside a guest).
static: $(OUTPUT)/iotracer.static $(OUTPUT)/test_link.static

$(OUTPUT)/static/%.o: src/%.c | $(OUTPUT)/version.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -DIT_NO_CURL -MMD -MP -c $< -o $@

$(OUTPUT)/iotracer.static: $(STATIC_OBJS)
	$(call msg,STATIC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -static $(LDLIBS) -o $@ \
		2>$@.log || { cat $@.log >&2; exit 1; }

$(OUTPUT)/test_link.static: tests/unit/test_link.c \
		$(filter-out $(patsubst src/%.c,$(OUTPUT)/pure/%.o,$(CURL_SRCS)),$(PURE_OBJS)) \
		$(patsubst src/%.c,$(OUTPUT)/static/%.o,$(CURL_SRCS))
	$(call msg,STATIC,$@)
	$(Q)$(CC) $(CFLAGS) -O1 $^ -static $(PURE_LIBS) -o $@

# Regenerate this architecture's committed vmlinux.h from the running kernel
# (not part of the build). Another architecture's from a BTF file: arm64's from
# the lab's Debian 12 arm64 kernel, which tests/lab/fetch.sh 6.1-arm64 cuts out of
# its Image (tests/lab/extract-btf.sh):
#   make vmlinux ARCH=arm64 VMLINUX_BTF=build/lab/kernels/6.1.0-N-arm64/btf
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
vmlinux:
	mkdir -p $(dir $(VMLINUX))
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $(VMLINUX)

# Unit tests: no root, no BPF, under ASan/UBSan.
$(OUTPUT)/unit/%: tests/unit/%.c $(SAN_OBJS) | $(OUTPUT)/unit $(OUTPUT)/version.h
	$(call msg,UNIT,$@)
	$(Q)$(CC) $(filter-out -O2,$(CFLAGS)) -O1 $(SAN_FLAGS) -MMD -MP $< $(SAN_OBJS) $(PURE_LIBS) -o $@

# test_loader: the loader's hook table against the BPF objects, opened with libbpf and
# never loaded (no root). It links the libbpf side the loader needs, and a copy of the
# object with one program no hook names (tests/unit/stray.bpf.c).
LOADER_SAN  := $(patsubst src/%.c,$(OUTPUT)/san/%.o,$(LOADER_SRCS) src/load/kfeat.c \
	       src/load/filters.c)
$(LOADER_SAN): | $(SKELS)
$(OUTPUT)/unit/stray.bpf.o: tests/unit/stray.bpf.c $(VMLINUX) | $(OUTPUT)/unit
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(OUTPUT)/unit/stray.linked.o: $(BPF_OBJS) $(OUTPUT)/unit/stray.bpf.o
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^
$(OUTPUT)/unit/test_loader: tests/unit/test_loader.c $(SAN_OBJS) $(LOADER_SAN) \
		$(OUTPUT)/unit/stray.linked.o | $(SKELS)
	$(call msg,UNIT,$@)
	$(Q)$(CC) $(filter-out -O2,$(CFLAGS)) -O1 $(SAN_FLAGS) -MMD -MP $< $(SAN_OBJS) $(LOADER_SAN) \
		-lbpf $(PURE_LIBS) -lpthread -o $@

# test_blkstale: the daemon's sweep of missed block completions on a real LRU hash
# like the BPF side's `bios` (root: SKIP without it).
$(OUTPUT)/unit/test_blkstale: tests/unit/test_blkstale.c $(SAN_OBJS) $(OUTPUT)/san/load/blkstale.o
	$(call msg,UNIT,$@)
	$(Q)$(CC) $(filter-out -O2,$(CFLAGS)) -O1 $(SAN_FLAGS) -MMD -MP $< $(SAN_OBJS) \
		$(OUTPUT)/san/load/blkstale.o -lbpf $(PURE_LIBS) -o $@

unit: $(UNIT_BINS)
	@tests/run.sh --unit $(UNIT_BINS)

integration: iotracer $(OUTPUT)/link_peer
	@tests/run.sh --integration

# The dependencies first (apt-get, one at a time), then the builds on every CPU (a fresh
# clone's build took 129 s serially, 79 s with -j2 on the 2-core dev VM), then the tests.
test: deps deps-test
	@$(MAKE) --no-print-directory -j$(NPROC) iotracer $(UNIT_BINS) tools fuzz-build
	@FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) SOAK_SECONDS=$(SOAK_TEST_SECONDS) tests/run.sh --all $(UNIT_BINS)

# Fuzzing (docs/testing.md, "Fuzzing"). A target is tests/fuzz/fuzz_<name>.c (one
# LLVMFuzzerTestOneInput) plus its name in this list; seeds in tests/fuzz/corpus/<name>/,
# regression inputs in tests/fuzz/regress/<name>/. The pure modules are rebuilt with clang
# and coverage + ASan/UBSan into build/fuzz/obj; each target links all of them.
FUZZ_TARGETS := \
	link \
	cli \
	config \
	qemu \
	elf \
	json \
	jsonl \
	record
FUZZ_SECONDS ?= 60
# make test's fuzzing a target and soak (docs/testing.md): shorter under CI=true, where
# the whole suite has to stay well under 20 min (the regression inputs are replayed all
# the same; the soak's checks keep their samples: "test_soak.sh")
ifeq ($(CI),true)
FUZZ_TEST_SECONDS ?= 4
SOAK_TEST_SECONDS ?= 45
else
FUZZ_TEST_SECONDS ?= 20
SOAK_TEST_SECONDS ?= 90
endif
FUZZ_DIR    := $(OUTPUT)/fuzz
FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := $(filter-out -O2,$(CFLAGS)) -O1 $(FUZZ_SAN)
FUZZ_OBJS   := $(patsubst src/%.c,$(FUZZ_DIR)/obj/%.o,$(PURE_SRCS))
FUZZ_BINS   := $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_TARGETS))
# seeds made at build time: link frames by a generator, small ELF files (docs/testing.md)
FUZZ_SEEDS  := $(FUZZ_DIR)/seeds/link.done $(FUZZ_DIR)/seeds/elf.done \
	       $(FUZZ_DIR)/seeds/record.done

$(FUZZ_DIR)/obj/%.o: src/%.c | $(OUTPUT)/version.h
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OBJS)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -MMD -MP $< $(FUZZ_OBJS) $(PURE_LIBS) -o $@

$(FUZZ_DIR)/seed_link: tests/fuzz/seed_link.c $(PURE_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP $< $(PURE_OBJS) $(PURE_LIBS) -o $@

$(FUZZ_DIR)/seeds/link.done: $(FUZZ_DIR)/seed_link
	$(Q)rm -rf $(FUZZ_DIR)/seeds/link && mkdir -p $(FUZZ_DIR)/seeds/link
	$(Q)$< $(FUZZ_DIR)/seeds/link && touch $@

# seed_record writes real segments with the recorder (tests/fuzz/seed_record.c).
$(FUZZ_DIR)/seed_record: tests/fuzz/seed_record.c $(PURE_OBJS)
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP $< $(PURE_OBJS) $(PURE_LIBS) -o $@

$(FUZZ_DIR)/seeds/record.done: $(FUZZ_DIR)/seed_record
	$(Q)rm -rf $(FUZZ_DIR)/seeds/record && mkdir -p $(FUZZ_DIR)/seeds/record
	$(Q)$< $(FUZZ_DIR)/seeds/record && touch $@

# tests/fuzz/seed_elf.c as a stripped shared object (.dynsym only), an executable
# (.symtab only) and a PIE with both; no libc, small pages: 1-2 KiB each
FUZZ_ELF_CC := $(CC) -Os -nostdlib -fno-asynchronous-unwind-tables -Wl,--build-id=none \
	       -Wl,-z,noseparate-code -Wl,-z,norelro -Wl,-z,max-page-size=4096
$(FUZZ_DIR)/seeds/elf.done: tests/fuzz/seed_elf.c
	$(Q)rm -rf $(FUZZ_DIR)/seeds/elf && mkdir -p $(FUZZ_DIR)/seeds/elf
	$(Q)$(FUZZ_ELF_CC) -shared -fPIC -s $< -o $(FUZZ_DIR)/seeds/elf/stripped.so
	$(Q)$(FUZZ_ELF_CC) -static -no-pie -Wl,-e,qemu_main $< -o $(FUZZ_DIR)/seeds/elf/exec
	$(Q)$(FUZZ_ELF_CC) -fPIE -pie -Wl,-E -Wl,-e,qemu_main $< -o $(FUZZ_DIR)/seeds/elf/pie
	$(Q)touch $@

# Build the targets (and their seeds) when clang's libFuzzer runtime is there: `make test`
# must not fail without it (test_fuzz.sh then reports SKIP). The seeds link the pure
# objects: made here first, so that the sub-make beside `make test`'s -j build does not
# compile all of them a second time at once (a fresh clone's build did, 109 objects).
fuzz-build: $(PURE_OBJS)
	@if CLANG=$(CLANG) tests/fuzz/fuzz.sh --have-runtime; then \
		$(MAKE) --no-print-directory fuzz-bins; \
	else echo "fuzz: no libFuzzer runtime (make deps installs libclang-rt-dev): not built"; fi

fuzz-bins: $(FUZZ_BINS) $(FUZZ_SEEDS)
	@:

# Each target for FUZZ_SECONDS, one after the other; the corpus grows in build/fuzz/corpus.
fuzz: fuzz-build
	@CLANG=$(CLANG) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/fuzz.sh $(FUZZ_TARGETS)

# Measuring tools (docs/bench.md): the pure modules without BPF, daemon flags.
# replay_bench: daemon CPU per request replayed from synthetic records;
# bench_output: CPU cost of out_request() per request, and a byte-exact dump.
tools: $(TOOLS)
replay-bench: $(OUTPUT)/replay_bench

$(OUTPUT)/%: tools/%.c $(PURE_OBJS) | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP $< $(PURE_OBJS) $(PURE_LIBS) -o $@

# tax_floor: empty programs on the raw pair or per-syscall tracepoints (bench's floor-*)
$(OUTPUT)/tax_floor.bpf.o: tools/tax_floor.bpf.c $(VMLINUX) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(OUTPUT)/tax_floor.skel.h: $(OUTPUT)/tax_floor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name tax_floor_bpf > $@
$(OUTPUT)/tax_floor: tools/tax_floor.c $(OUTPUT)/tax_floor.skel.h | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -lbpf -lelf -lz

# Tests' helpers (test_compat.sh; the lab's stats fd): no project code in them.
$(OUTPUT)/compat_syscall $(OUTPUT)/bpf_stats_hold $(OUTPUT)/nonfile_io: $(OUTPUT)/%: tests/tools/%.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

# Install (docs/service.md). PREFIX=/usr/local by default; DESTDIR for staging.
PREFIX      ?= /usr/local
SYSCONFDIR  ?= /etc
BINDIR      := $(PREFIX)/bin
DATADIR     := $(PREFIX)/share/iotracer
MANDIR      := $(PREFIX)/share/man/man8
UNITDIR     ?= $(PREFIX)/lib/systemd/system
MANPAGES    := $(wildcard docs/man/*.8)

install: iotracer
	install -D -m 0755 iotracer $(DESTDIR)$(BINDIR)/iotracer
	install -d $(DESTDIR)$(DATADIR)/scripts $(DESTDIR)$(MANDIR) $(DESTDIR)$(UNITDIR)
	install -m 0644 src/bench/scripts/*.bt $(DESTDIR)$(DATADIR)/scripts/
	install -m 0644 configs/iotracer-rules.yml configs/grafana-iotracer.json $(DESTDIR)$(DATADIR)/
	install -m 0644 $(MANPAGES) $(DESTDIR)$(MANDIR)/
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		configs/iotracer.service.in > $(DESTDIR)$(UNITDIR)/iotracer.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/iotracer.service
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/iotracer
	@# an existing configuration is the operator's: never overwritten
	if [ -f configs/iotracer.conf ] && [ ! -e $(DESTDIR)$(SYSCONFDIR)/iotracer/iotracer.conf ]; then \
		install -m 0644 configs/iotracer.conf $(DESTDIR)$(SYSCONFDIR)/iotracer/iotracer.conf; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/iotracer $(DESTDIR)$(UNITDIR)/iotracer.service
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/,$(notdir $(MANPAGES)))
	rm -rf $(DESTDIR)$(DATADIR)

# The Debian package (docs/package.md): the files of `make install PREFIX=/usr` (man pages
# compressed, the unit in /lib/systemd/system), the binary stripped, Depends from
# dpkg-shlibdeps (the shared libraries the binary links: runtime packages only) and
# DEB_DLOPEN, the libraries it loads with dlopen, which dpkg-shlibdeps cannot see:
# libcurl.so.4 at --sink (src/sink/curldl.c; CURLOPT_PROTOCOLS_STR needs 7.85).
DEB_ARCH    := $(shell dpkg --print-architecture 2>/dev/null || echo unknown)
DEB_MAINTAINER ?= iotracer developers <iotracer@example.org>
DEB_DIR     := $(OUTPUT)/deb
DEB_ROOT    := $(DEB_DIR)/debian/iotracer
DEB         := $(OUTPUT)/iotracer_$(VERSION)_$(DEB_ARCH).deb
DEB_DLOPEN  := libcurl4 (>= 7.85.0)

deb: $(DEB)

$(DEB): iotracer $(MANPAGES) configs/iotracer.service.in configs/iotracer.conf \
	configs/iotracer-rules.yml configs/grafana-iotracer.json $(wildcard configs/deb/*)
	$(call msg,DEB,$@)
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_ROOT)/DEBIAN
	$(Q)$(MAKE) -s install DESTDIR=$(abspath $(DEB_ROOT)) PREFIX=/usr SYSCONFDIR=/etc \
		UNITDIR=/lib/systemd/system
	$(Q)strip --strip-unneeded --remove-section=.comment --remove-section=.note \
		$(DEB_ROOT)/usr/bin/iotracer
	$(Q)gzip -9n $(DEB_ROOT)/usr/share/man/man8/*.8
	$(Q)chmod 0755 $(DEB_ROOT)/usr/share/iotracer/scripts/*.bt
	$(Q)install -D -m 0644 configs/deb/copyright $(DEB_ROOT)/usr/share/doc/iotracer/copyright
	$(Q)install -D -m 0644 configs/deb/lintian-overrides $(DEB_ROOT)/usr/share/lintian/overrides/iotracer
	$(Q)printf 'iotracer (%s) unstable; urgency=medium\n\n  * Built from git revision %s.\n\n -- %s  %s\n' \
		'$(VERSION)' '$(GITREV)' '$(DEB_MAINTAINER)' \
		"$$(date -R -u -d @$$(git log -1 --format=%ct 2>/dev/null || date +%s))" | \
		gzip -9n > $(DEB_ROOT)/usr/share/doc/iotracer/changelog.gz
	$(Q)install -m 0755 configs/deb/postinst configs/deb/prerm configs/deb/postrm $(DEB_ROOT)/DEBIAN/
	$(Q)echo /etc/iotracer/iotracer.conf > $(DEB_ROOT)/DEBIAN/conffiles
	$(Q)printf 'Source: iotracer\n\nPackage: iotracer\nArchitecture: any\n' > $(DEB_DIR)/debian/control
	$(Q)deps=$$(cd $(DEB_DIR) && dpkg-shlibdeps -O -e debian/iotracer/usr/bin/iotracer 2>&1 | \
		sed -n 's/^shlibs:Depends=//p') && test -n "$$deps" && deps="$$deps, $(DEB_DLOPEN)" && \
	size=$$(du -sk --exclude=DEBIAN $(DEB_ROOT) | cut -f1) && \
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@ARCH@|$(DEB_ARCH)|' -e 's|@MAINTAINER@|$(DEB_MAINTAINER)|' \
		-e "s|@SIZE@|$$size|" -e "s|@DEPENDS@|$$deps|" configs/deb/control.in > $(DEB_ROOT)/DEBIAN/control
	$(Q)cd $(DEB_ROOT) && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort | \
		xargs md5sum > DEBIAN/md5sums
	$(Q)chmod 0644 $(DEB_ROOT)/DEBIAN/md5sums $(DEB_ROOT)/DEBIAN/conffiles $(DEB_ROOT)/DEBIAN/control
	$(Q)dpkg-deb --root-owner-group -Zxz --build $(DEB_ROOT) $@ >/dev/null

ARGS ?= -i 10s
run: deps iotracer
	./iotracer $(ARGS)

lab:
	@tests/lab/run.sh

# the repo's git hooks (tools/git-hooks: commit-msg checks subjects <= 72 characters)
githooks:
	git config core.hooksPath tools/git-hooks
	@echo "githooks: core.hooksPath = tools/git-hooks"

# every tracked C file but the generated vmlinux.h; test_tree.sh checks the same set
format:
	git ls-files -z -- '*.c' '*.h' ':!vmlinux' | xargs -0 clang-format -i

clean:
	rm -rf $(OUTPUT) iotracer

.SECONDARY: $(PURE_OBJS) $(SAN_OBJS) $(FUZZ_OBJS)

-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)
