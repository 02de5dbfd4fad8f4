# reachd: `make run` and `make test` are the two set-up commands on a fresh
# Debian machine; each installs what it needs first.

SWIFT        ?= swift
PREFIX       ?= /usr/local
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Build: libnl headers, pkg-config, libcurl4 (URLSession, for the example).
# Tests: iproute2 for namespaces and veth pairs, python3 for the fixture
# recorder and the example's item server, strace to prove an idle daemon sleeps.
BUILD_DEPS   := libnl-3-dev libnl-route-3-dev pkg-config libcurl4
TEST_DEPS    := $(BUILD_DEPS) iproute2 python3 strace

.PHONY: all build release run test bench deps test-deps clean

all: build

# Installs only the packages that are missing, so a ready machine pays nothing.
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call apt_install,$(BUILD_DEPS))

test-deps:
	$(call apt_install,$(TEST_DEPS))

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# The daemon in the foreground on the default socket: /run/reachd/reachd.sock
# as root, $$XDG_RUNTIME_DIR/reachd.sock otherwise. `reachd status` in another
# terminal finds it either way.
run: release
	.build/release/reachd daemon

# Unit tests everywhere; namespace tests too where run as root (they skip,
# saying why, elsewhere).
test: test-deps
	$(SWIFT) build
	$(SWIFT) test --disable-xctest

bench: test-deps release
	bash bench/run.sh

clean:
	rm -rf .build
