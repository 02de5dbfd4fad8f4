# reachd: `make run` and `make test` are the two set-up commands on a fresh
# Debian machine; each installs what it needs first.

SWIFT        ?= swift
# pipefail, for the test log.
SHELL        := /bin/bash
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
UNITDIR      ?= $(PREFIX)/lib/systemd/system
MANDIR       ?= $(PREFIX)/share/man
DATADIR      ?= $(PREFIX)/share
ZSHDIR       ?= $(DATADIR)/zsh/site-functions
SYSCONFDIR   ?= /etc
MANUAL       := .build/plugins/GenerateManual/outputs/reachd/reachd.1
# The manual's date is the last commit's, so the same source makes the same page.
MANUAL_DATE  := $(shell git log -1 --format=%cs 2>/dev/null)
# What the page is made of: the command's help, in its sources, and the date.
# make test installs twice (the staged tree and the .deb); the second finds
# the page made.
MANUAL_SOURCES := Package.swift docs/reachd.1.sections $(shell find Sources -name '*.swift' 2>/dev/null)
UNITS        := reachd.service reachd.socket reachd-metrics.socket reachd-wait-online.service reachd-wait-online@.service
# The shipped binary carries Swift's runtime: Debian has no package of it, and
# a binary linked to the toolchain's copy runs only where the toolchain lives.
# Only the reachd product: the example links libcurl, which has no static build here.
# No $$ORIGIN run path: a binary in /usr/bin must not load libraries from /usr/bin.
# A build directory of its own: SwiftPM plugins (generate-manual) build into
# .build/release with other flags, and it would not notice the swap.
DIST         := .build/dist
RELEASE      := $(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath --product reachd --scratch-path $(DIST)
REACHD       := $(DIST)/release/reachd
# Packagers who keep debug symbols (dh_strip, DEB_BUILD_OPTIONS=nostrip) set it empty.
INSTALL_STRIP ?= -s
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Build: libnl headers, pkg-config, libcurl4 (URLSession, for the example).
# Tests: iproute2 for namespaces and veth pairs, python3 for the fixture
# recorder and the example's item server, strace to prove an idle daemon sleeps,
# systemd-container to boot a real systemd around the units, man-db to check
# the manual renders without warnings, dpkg-dev and debootstrap to build the
# .deb and install it on a minimal Debian 12.
# The GIO module: a C compiler, GLib's and json-glib's headers. Its tests
# drive the real GLib from Python (python3-gi), and run it under valgrind.
# radvd sends the router advertisements whose routes expire unannounced;
# Prometheus and node_exporter scrape the daemon's metrics; nftables counts
# the packets a test must not see (no DNS query to judge name resolution).
# The GTK example (Examples/GtkListViewer, a package of its own, so that
# nothing else needs GTK) and its tests: libadwaita's headers, an X server
# with no screen (xvfb), screenshots (imagemagick), OCR (tesseract-ocr, with
# its English data), clicks (xdotool), the fonts and icons it draws, and
# what a screen reader reads it through (a session bus, AT-SPI, and its
# GObject introspection for python3-gi).
GIO_DEPS     := gcc libglib2.0-dev libjson-glib-dev
GTK_DEPS     := libadwaita-1-dev libgtk-4-dev adwaita-icon-theme fonts-dejavu-core
DESKTOP_DEPS := $(GTK_DEPS) xvfb imagemagick tesseract-ocr xdotool dbus-daemon at-spi2-core gir1.2-atspi-2.0
BUILD_DEPS   := libnl-3-dev libnl-route-3-dev libsystemd-dev pkg-config libcurl4 $(GIO_DEPS)
TEST_DEPS    := $(BUILD_DEPS) iproute2 python3 strace systemd-container man-db dpkg-dev debootstrap python3-gi valgrind \
                radvd dnsmasq-base prometheus prometheus-node-exporter nftables $(DESKTOP_DEPS)
# make bench also reads the scheduler's own timeline (perf sched).
BENCH_DEPS   := $(TEST_DEPS) linux-perf
GTK_VIEWER   := $(CURDIR)/Examples/GtkListViewer/.build/debug/gtk-list-viewer

# The GIO module (Sources/ReachdGIO), in C: it is loaded into every GLib
# program, which must not load Swift's runtime with it.
GIO_MODULE   := .build/gio/libgioreachd.so
GIO_SOURCES  := $(wildcard Sources/ReachdGIO/*.c Sources/ReachdGIO/*.h)
GIO_PACKAGES := gio-2.0 gio-unix-2.0 json-glib-1.0
# GLib loads modules from its own directory and nowhere else (but for
# GIO_EXTRA_MODULES): a system install (PREFIX /usr or /usr/local) puts the
# module there; any other prefix under itself, for GIO_EXTRA_MODULES.
GLIB_MODULEDIR   := $(shell pkg-config --variable=giomoduledir gio-2.0 2>/dev/null)
GIOMODULEDIR     ?= $(if $(filter /usr /usr/local,$(PREFIX)),$(GLIB_MODULEDIR),$(PREFIX)/lib/gio/modules)
GIO_QUERYMODULES := $(shell pkg-config --variable=gio_querymodules gio-2.0 2>/dev/null)
CFLAGS       ?= -O2 -g
GIO_CFLAGS   := -std=gnu11 -fPIC -fvisibility=hidden -Wall -Wextra -Wshadow -Wmissing-prototypes \
                -DG_LOG_DOMAIN='"reachd-gio"' \
                -DGLIB_VERSION_MIN_REQUIRED=GLIB_VERSION_2_74 -DGLIB_VERSION_MAX_ALLOWED=GLIB_VERSION_2_74

.PHONY: all build release run check test docs bench fuzz sanitize deps test-deps bench-deps clean clean-test-cache install uninstall deb gio-module \
        gtk-example screenshots FORCE

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

bench-deps:
	$(call apt_install,$(BENCH_DEPS))

build: deps
	$(SWIFT) build
	$(MAKE) gio-module

gio-module: $(GIO_MODULE)

# Only the module's entry points are exported; -z defs finds a missing library at build time, not in an app.
$(GIO_MODULE): $(GIO_SOURCES)
	@pkg-config --exists $(GIO_PACKAGES) && command -v $(CC) >/dev/null || { echo "the GIO module needs $(GIO_DEPS) (make deps installs them)" >&2; exit 1; }
	mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(GIO_CFLAGS) $(CFLAGS) $$(pkg-config --cflags $(GIO_PACKAGES)) -shared \
	  -o $@ $(filter %.c,$^) $(LDFLAGS) -Wl,-z,defs -Wl,--as-needed $$(pkg-config --libs $(GIO_PACKAGES))

release: deps
	$(RELEASE)

# The daemon in the foreground on the default socket: /run/reachd/reachd.sock
# as root, $$XDG_RUNTIME_DIR/reachd.sock otherwise. `reachd status` in another
# terminal finds it either way.
run: release
	$(REACHD) daemon

# The unit tests only, for the edit-build-test loop: no install, .deb,
# container or namespace (those suites skip, saying so). `make test` is the
# full gate, and what CI runs.
check: deps
	$(SWIFT) build --build-tests
	REACHD_TESTS=unit $(SWIFT) test --skip-build --disable-xctest

# Unit tests everywhere; namespace tests too where run as root (they skip,
# saying why, elsewhere).
# `make install` staged into .build/test-root first (PREFIX /usr/local): the
# systemd tests verify it and boot a container with it mounted at /usr/local.
test: test-deps
	# Built first, whatever make build left: a warning fails the tests, and
	# the staged tree and the packages take this build.
	$(MAKE) -B gio-module CFLAGS="-O2 -g -Werror"
	$(MAKE) install DESTDIR=$(CURDIR)/.build/test-root
	$(MAKE) deb
	$(MAKE) gtk-example
	# CI shows the end of the output: the failures are said again there.
	# REACHD_GTK_VIEWER: the desktop tests fail, not skip, if the example is missing.
	@set -o pipefail; REACHD_GTK_VIEWER=$(GTK_VIEWER) $(SWIFT) test --disable-xctest 2>&1 | tee .build/test.log || { \
	  echo "--- what failed (the whole log: .build/test.log) ---"; \
	  grep -A3 ' recorded an issue' .build/test.log | grep -E '^(✘|↳)' | head -40; exit 1; }
	$(MAKE) docs
	$(MAKE) fuzz FUZZ_RUNS=$(TEST_FUZZ_RUNS)

# The GTK 4 example, in its own package: it depends on this one by path.
gtk-example:
	$(call apt_install,$(GTK_DEPS))
	# SwiftPM lists a path dependency's files when it plans, and plans again
	# only when a manifest changes: a file added to Sources since was missed
	# ("cannot find type" in the example's build). A directory under Sources
	# newer than the example's last plan makes it plan again.
	@if [ -n "$$(find Sources -type d -newer Examples/GtkListViewer/.build/debug.yaml 2>/dev/null | head -1)" ]; then \
	  touch Examples/GtkListViewer/Package.swift; fi
	$(SWIFT) build --package-path Examples/GtkListViewer

# docs/images: the GTK example in each state, pictured by its own tests in
# a real window under Xvfb (as root: the tests build network namespaces).
screenshots: test-deps gtk-example
	$(SWIFT) build --build-tests
	mkdir -p docs/images
	REACHD_GTK_VIEWER=$(GTK_VIEWER) REACHD_SCREENSHOTS=$(CURDIR)/docs/images \
	  $(SWIFT) test --skip-build --disable-xctest --filter GtkListViewerTests

# Every parser of bytes from outside (the status decoder, the request parser,
# the netlink decoder, the HTTP response parser, reachd.conf, a scrape's
# request, the GIO module's reading of the daemon's lines) under libFuzzer
# and AddressSanitizer, from the seed corpora in Fuzz/Corpus: FUZZ_SECONDS
# each, FUZZ_JOBS at once (one per core unless set). `make test` gives each a
# fixed number of inputs from a fixed seed (FUZZ_RUNS; see Fuzz/run.sh):
# about 2 to 40 s each here, two at a time.
FUZZ_SECONDS   ?= 300
FUZZ_RUNS      ?=
TEST_FUZZ_RUNS ?= 200000

fuzz: deps
	FUZZ_RUNS=$(FUZZ_RUNS) bash Fuzz/run.sh $(FUZZ_SECONDS)

# The test suites under ThreadSanitizer and AddressSanitizer, each in a build
# directory of its own; both run, and either failing fails the target. Under
# the sanitizers' runtimes, tests that bound a time or count system calls
# (strace sees the runtime's own threads) fail without a fault of reachd's.
# TSan also reports accesses inside a contended Swift `Mutex`: its slow path
# takes a futex in libswiftSynchronization, which TSan does not see. One
# Foundation leak is suppressed for LeakSanitizer (Tests/lsan.supp).
sanitize: test-deps
	@status=0; \
	$(SWIFT) test --disable-xctest --sanitize=thread --scratch-path .build/tsan || status=1; \
	LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/lsan.supp \
	  $(SWIFT) test --disable-xctest --sanitize=address --scratch-path .build/asan || status=1; \
	exit $$status

# The libraries' DocC documentation (Sources/*/*.docc); a broken link or an
# undocumented parameter fails it.
docs: deps
	$(SWIFT) package generate-documentation --target Reachability --target ReachabilityPlaceholders --warnings-as-errors

# bench/latency.py's fan-out reader is C, built with the module's compiler;
# python3-gi, for GLib's network monitor as its yardstick, comes with the
# test dependencies.
bench: bench-deps release gio-module
	$(SWIFT) build -c release --product OnlineBanner
	$(SWIFT) build -c release --product MonitorCost
	REACHD=$(CURDIR)/$(REACHD) REACHD_BANNER=$(CURDIR)/.build/release/OnlineBanner \
	  REACHD_MONITOR_COST=$(CURDIR)/.build/release/MonitorCost bash bench/run.sh

# The binary, the systemd units pointing at it, a man page generated from the
# command's own help, shell completions, and the GIO module. DESTDIR stages
# for packaging.
# Never runs apt (packagers and admins install build dependencies their own
# way); a missing one fails the build, which names the package to install.
install: $(GIO_MODULE) .build/reachd.1
	$(RELEASE)
	install -Dm755 $(INSTALL_STRIP) $(REACHD) $(DESTDIR)$(BINDIR)/reachd
	for unit in $(UNITS); do \
	  sed 's|@BINDIR@|$(BINDIR)|g' systemd/$$unit > .build/$$unit && \
	  install -Dm644 .build/$$unit $(DESTDIR)$(UNITDIR)/$$unit || exit 1; \
	done
	install -Dm644 .build/reachd.1 $(DESTDIR)$(MANDIR)/man1/reachd.1
	# journalctl reads catalogs from /usr/lib and /usr/local/lib alone;
	# `journalctl --update-catalog` (a package's trigger) indexes them.
	install -Dm644 systemd/reachd.catalog $(DESTDIR)$(PREFIX)/lib/systemd/catalog/reachd.catalog
	# The daemon's user; on a live install, made now (a package's postinst does).
	install -Dm644 systemd/reachd.sysusers $(DESTDIR)$(PREFIX)/lib/sysusers.d/reachd.conf
	[ -n "$(DESTDIR)" ] || ! command -v systemd-sysusers >/dev/null || systemd-sysusers reachd.conf
	install -Dm644 docs/PROTOCOL.md $(DESTDIR)$(DATADIR)/doc/reachd/PROTOCOL.md
	install -Dm644 LICENSE $(DESTDIR)$(DATADIR)/doc/reachd/LICENSE
	# The configuration, unless one is there already: an administrator's edits stay.
	[ -e $(DESTDIR)$(SYSCONFDIR)/reachd/reachd.conf ] || \
	  install -Dm644 systemd/reachd.conf $(DESTDIR)$(SYSCONFDIR)/reachd/reachd.conf
	$(REACHD) --generate-completion-script bash > .build/reachd.bash
	$(REACHD) --generate-completion-script zsh > .build/_reachd
	$(REACHD) --generate-completion-script fish > .build/reachd.fish
	install -Dm644 .build/reachd.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/reachd
	install -Dm644 .build/_reachd $(DESTDIR)$(ZSHDIR)/_reachd
	install -Dm644 .build/reachd.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/reachd.fish
	@[ -n "$(GLIB_MODULEDIR)" ] || { echo "pkg-config does not know gio-2.0's module directory: install $(GIO_DEPS)" >&2; exit 1; }
	install -Dm644 $(INSTALL_STRIP) $(GIO_MODULE) $(DESTDIR)$(GIOMODULEDIR)/libgioreachd.so
	# GLib reads which module implements what from the directory's cache. A
	# package leaves it to libglib2.0's trigger on the directory.
	[ -n "$(DESTDIR)" ] || $(GIO_QUERYMODULES) $(GIOMODULEDIR)
	@[ "$(GIOMODULEDIR)" = "$(GLIB_MODULEDIR)" ] || \
	  echo "GLib loads the module from $(GIOMODULEDIR) only with GIO_EXTRA_MODULES=$(GIOMODULEDIR)"

# The page, made again when its sources or the date change.
.build/reachd.1: $(MANUAL_SOURCES) .build/manual-date
	# The plugin builds the package to run it; debug is what make test builds anyway.
	$(SWIFT) package --allow-writing-to-package-directory generate-manual --configuration debug $(if $(MANUAL_DATE),--date $(MANUAL_DATE))
	# Blank lines from the help become paragraphs (mdoc warns about them), and
	# the generic EXIT STATUS gives way to docs/reachd.1.sections: ENVIRONMENT,
	# FILES, the exit codes, SEE ALSO.
	sed -e 's/^$$/.Pp/' -e '/^\.Sh "EXIT STATUS"/,$$d' $(MANUAL) > $@.new
	cat docs/reachd.1.sections >> $@.new
	mv $@.new $@

# Rewritten only when the date changes, so that the page depends on the date.
.build/manual-date: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = "$(MANUAL_DATE)" ] || echo "$(MANUAL_DATE)" > $@

FORCE:

# Two Debian packages: .build/reachd_VERSION_ARCH.deb, the self-contained
# binary and its units, and .build/reachd-gio_VERSION_ARCH.deb, the GIO module,
# apart so that a server's reachd does not pull in GLib. Their Depends come
# from dpkg-shlibdeps (dpkg-dev); the paths are Debian's.
deb:
	$(call apt_install,$(BUILD_DEPS) dpkg-dev)
	rm -rf .build/deb-root
	# As dpkg-buildpackage does: the staged tree's modes are the package's,
	# whatever the umask of whoever builds it.
	umask 022 && $(MAKE) install DESTDIR=$(CURDIR)/.build/deb-root PREFIX=/usr ZSHDIR=/usr/share/zsh/vendor-completions && \
	  bash packaging/deb/build.sh .build/deb-root .build

# Leaves $(SYSCONFDIR)/reachd/reachd.conf, as Debian leaves a removed package's conffiles.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/reachd $(DESTDIR)$(MANDIR)/man1/reachd.1
	rm -f $(DESTDIR)$(PREFIX)/lib/systemd/catalog/reachd.catalog
	rm -f $(DESTDIR)$(PREFIX)/lib/sysusers.d/reachd.conf
	rm -rf $(DESTDIR)$(DATADIR)/doc/reachd
	for unit in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$unit; done
	rm -f $(DESTDIR)$(DATADIR)/bash-completion/completions/reachd \
	      $(DESTDIR)$(ZSHDIR)/_reachd \
	      $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/reachd.fish
	rm -f $(DESTDIR)$(GIOMODULEDIR)/libgioreachd.so
	if [ -z "$(DESTDIR)" ] && [ -n "$(GIO_QUERYMODULES)" ] && [ -d "$(GIOMODULEDIR)" ]; then \
	  $(GIO_QUERYMODULES) $(GIOMODULEDIR); fi

clean:
	rm -rf .build

# The minimal Debian 12 that the package test builds once and boots overlays of.
clean-test-cache:
	rm -rf /var/cache/reachd-tests
