# iotracer build. `make deps` once (apt-get, idempotent), then `make`.
# Targets: all deps run test unit integration lab vmlinux format clean replay-bench
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
	       -Iinclude -Isrc -I$(OUTPUT) -D_GNU_SOURCE \
	       -DIT_VERSION='"$(VERSION) ($(GITREV))"'
ifeq ($(DEBUG),1)
CFLAGS      += -O0
endif
LDLIBS      := -lbpf -lelf -lz -lm
BPF_CFLAGS  := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Iinclude -Ibpf \
	       -Wall -Wno-unused-function -Wno-compare-distinct-pointer-types

ifneq ($(V),1)
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Pure user-space modules (no libbpf): unit-tested under ASan/UBSan.
CORE_SRCS   := $(filter-out src/main.c src/loader.c src/daemon.c src/host.c,$(wildcard src/*.c))
BPF_SRCS    := $(wildcard bpf/*.bpf.c)
BPF_OBJS    := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS       := $(OUTPUT)/iotracer.skel.h
SRCS        := $(wildcard src/*.c)
OBJS        := $(patsubst src/%.c,$(OUTPUT)/%.o,$(SRCS))
UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
UNIT_BINS   := $(patsubst tests/unit/%.c,$(OUTPUT)/unit/%,$(UNIT_SRCS))
SAN_FLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

DEPS_PKGS   := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config make gcc \
	       fio jq util-linux e2fsprogs procps libaio-dev liburing-dev libzstd-dev bpftrace

.PHONY: all deps run test unit integration lab vmlinux format clean replay-bench

all: iotracer

deps:
	@missing=$$(for p in $(DEPS_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "deps: all installed"; fi

$(OUTPUT) $(OUTPUT)/unit:
	$(Q)mkdir -p $@

# BPF objects -> one linked object -> skeleton.
$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.bpf.h) include/iotracer.h vmlinux/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/iotracer.linked.o: $(BPF_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/iotracer.skel.h: $(OUTPUT)/iotracer.linked.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name iotracer_bpf > $@

$(OUTPUT)/%.o: src/%.c $(wildcard src/*.h) include/iotracer.h $(SKELS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

iotracer: $(OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# Regenerate the committed vmlinux.h from the running kernel (not part of the build).
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

# Unit tests: no root, no BPF, under ASan/UBSan.
$(OUTPUT)/unit/%: tests/unit/%.c tests/unit/unit.h $(CORE_SRCS) $(wildcard src/*.h) include/iotracer.h | $(OUTPUT)/unit
	$(call msg,UNIT,$@)
	$(Q)$(CC) $(filter-out -O2,$(CFLAGS)) -O1 $(SAN_FLAGS) $< $(CORE_SRCS) -lelf -lz -lm -o $@

unit: $(UNIT_BINS)
	@tests/run.sh --unit $(UNIT_BINS)

integration: iotracer
	@tests/run.sh --integration

test: deps iotracer $(UNIT_BINS)
	@tests/run.sh --all $(UNIT_BINS)

# Daemon CPU per request, replayed from synthetic records (tools/replay_bench.c;
# docs/bench.md, "Daemon cost per request"). Same flags as the daemon, no BPF.
replay-bench: $(OUTPUT)/replay_bench

$(OUTPUT)/replay_bench: tools/replay_bench.c $(CORE_SRCS) $(wildcard src/*.h) include/iotracer.h | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $< $(CORE_SRCS) -lelf -lz -lm -o $@

ARGS ?= -i 10s
run: deps iotracer
	./iotracer $(ARGS)

lab:
	@tests/lab/run.sh

format:
	clang-format -i src/*.c src/*.h include/*.h bpf/*.c bpf/*.h tests/unit/*.c tests/unit/*.h

clean:
	rm -rf $(OUTPUT) iotracer
