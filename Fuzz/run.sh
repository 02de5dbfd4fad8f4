#!/usr/bin/env bash
# Builds each fuzz target with libFuzzer and AddressSanitizer, and runs each
# for SECONDS (default 300) from its seed corpus, Fuzz/Corpus/TARGET (the
# reproducers of every bug fuzzing found, and real inputs), FUZZ_JOBS targets
# at once (one per core by default). A crash leaves its input in
# .build/fuzz/artifacts and fails the run.
#
#   Fuzz/run.sh [SECONDS] [TARGET...]
#
# With FUZZ_RUNS=N each target instead tries exactly N inputs from a fixed seed
# and the seed corpus alone: what CI tries stays about the same from run to
# run and machine to machine (libFuzzer's scheduling still varies a little),
# so it catches regressions and is unlikely to stumble on an old fault.
#
# Built with swiftc rather than SwiftPM: the daemon's parsers live in the
# reachd executable, which no other target may import, and libFuzzer brings a
# main() of its own. So each target is compiled with the few source files its
# parser needs; the library's pure model and protocol files are built once as
# a small instrumented Reachability module for the targets that import it.
# GIOLine is the GIO module's reading of the daemon's lines, in C, built with
# the clang beside swiftc.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-300}
shift || true
targets=("$@")
# The slowest first, so that no long run starts last on a core of its own.
all=(ConfigurationFile HostPort StatusDecoder HTTPResponse MetricsRequest RequestParser NetlinkDecoder GIOLine)
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

out=.build/fuzz
mkdir -p "$out/artifacts"
flags=(-O -g -parse-as-library -package-name reachd -sanitize=fuzzer,address -swift-version 6 -use-ld=lld)
netlink=(-I Sources/CNetlink $(pkg-config --cflags-only-I libnl-route-3.0 | sed 's/-I/-Xcc -I/g') $(pkg-config --libs libnl-route-3.0))
library=(Sources/Reachability/Model/*.swift Sources/Reachability/Protocol/*.swift Sources/Reachability/ReachdVersion.swift)

sources() {
  case $1 in
    StatusDecoder|RequestParser|GIOLine) ;;
    NetlinkDecoder) echo Sources/Reachability/Netlink/NetlinkDecoder.swift Sources/Reachability/Netlink/NetlinkFrame.swift \
        Sources/Reachability/Netlink/NetlinkEvent.swift Sources/Reachability/Netlink/RoutePrefix.swift \
        Sources/Reachability/Netlink/RemovedRoute.swift Sources/Reachability/Netlink/NetlinkAttributes.swift \
        Sources/Reachability/Netlink/RouteLookupResult.swift \
        Sources/Reachability/Netlink/RouteLookupRefusal.swift \
        Sources/Reachability/Netlink/RouteType.swift Sources/Reachability/Netlink/AddressScope.swift \
        Sources/Reachability/Netlink/OperationalState.swift Sources/Reachability/Netlink/NeighbourRecord.swift \
        Sources/Reachability/Model/IPAddress.swift Sources/Reachability/Model/AddressFamily.swift \
        Sources/Reachability/Model/ProtocolValue.swift ;;
    HTTPResponse|HostPort) echo Sources/reachd/Connectivity/HTTPResponse.swift Sources/reachd/Connectivity/ConnectivityVerdict.swift \
        Sources/reachd/Connectivity/ConnectivityCheck.swift ;;
    ConfigurationFile) echo Sources/reachd/Settings/ConfigurationFile.swift Sources/reachd/Settings/SecondsRange.swift \
        Sources/reachd/Connectivity/HTTPResponse.swift ;;
    MetricsRequest) echo Sources/reachd/Metrics/MetricsRequest.swift ;;
    *) echo "unknown fuzz target $1; known: ${all[*]}" >&2; exit 2 ;;
  esac
}

# The Reachability subset, once, unless a target needs none of it.
if printf '%s\n' "${targets[@]}" | grep -qvE '^(NetlinkDecoder|GIOLine)$'; then
  swiftc "${flags[@]}" -j "$(nproc)" -emit-library -static -emit-module -module-name Reachability \
    -emit-module-path "$out/Reachability.swiftmodule" -o "$out/libReachability.a" "${library[@]}"
fi

# One target: build it, then run it. Its output goes to $out/TARGET.out and
# is printed when every target is done, in the order asked.
fuzz_target() {
  local target=$1 files clang corpus runs budget dictionary extra_seeds=()
  files=$(sources "$target")
  if [ "$target" = GIOLine ]; then
    # C, as the module is: the clang beside swiftc, which has libFuzzer.
    clang="$(dirname "$(readlink -f "$(command -v swiftc)")")/clang"
    "$clang" -std=gnu11 -O1 -g -fsanitize=fuzzer,address -fuse-ld=lld \
      -Wall -Wextra -Werror -I Sources/ReachdGIO $(pkg-config --cflags gio-2.0 json-glib-1.0) -o "$out/$target" \
      Fuzz/FuzzGIOLine.c Sources/ReachdGIO/reachd-daemon-line.c $(pkg-config --libs gio-2.0 json-glib-1.0) || return 1
    # Seeded from the client spec's lines too (Tests/ClientSpec), written by its own driver.
    "$clang" -std=gnu11 -O1 -Wall -Werror -fuse-ld=lld -I Sources/ReachdGIO $(pkg-config --cflags gio-2.0 json-glib-1.0) -o "$out/spec-driver" \
      Tests/ClientSpec/spec-driver.c Sources/ReachdGIO/reachd-daemon-line.c $(pkg-config --libs gio-2.0 json-glib-1.0) || return 1
    rm -rf "$out/spec-seeds" && mkdir -p "$out/spec-seeds"
    "$out/spec-driver" --seeds "$out/spec-seeds" Tests/ClientSpec/status-lines.json || return 1
    extra_seeds=("$out/spec-seeds")
  elif [ "$target" = NetlinkDecoder ]; then
    swiftc "${flags[@]}" -module-name Fuzz "${netlink[@]}" -o "$out/$target" "Fuzz/Fuzz$target.swift" Fuzz/FuzzRequire.swift $files \
      || return 1
  else
    swiftc "${flags[@]}" -module-name Fuzz -I "$out" -o "$out/$target" \
      "Fuzz/Fuzz$target.swift" Fuzz/FuzzRequire.swift $files "$out/libReachability.a" || return 1
  fi
  # Where libFuzzer keeps what it finds; from the seeds alone with FUZZ_RUNS.
  corpus="$out/corpus/$target"
  [ -z "${FUZZ_RUNS:-}" ] || { corpus="$out/corpus-fixed/$target"; rm -rf "$corpus"; }
  mkdir -p "$corpus"
  if [ -n "${FUZZ_RUNS:-}" ]; then
    runs=$FUZZ_RUNS
    # json-glib under AddressSanitizer takes about 1.5 ms an input, the
    # Swift parsers 20 to 100 us: a tenth as many keeps make test's time.
    [ "$target" != GIOLine ] || runs=$((FUZZ_RUNS / 10))
    budget=(-runs="$runs" -seed=1)
    echo "fuzz: $target, $runs inputs from seed 1 (seeds: Fuzz/Corpus/$target)"
  else
    budget=(-max_total_time="$seconds")
    echo "fuzz: $target for $seconds s (seeds: Fuzz/Corpus/$target)"
  fi
  # The Swift runtime's backtracer waits on a crashing fuzzer; libFuzzer reports itself.
  # GLib's many small allocations filled ASan's 256 MB quarantine of freed
  # memory and took a third of the speed: 8 MB still holds a line's frees.
  # A target's dictionary of tokens, where it has one (Fuzz/TARGET.dict).
  dictionary=()
  [ ! -f "Fuzz/$target.dict" ] || dictionary=(-dict="Fuzz/$target.dict")
  if ! SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=quarantine_size_mb=8 "$out/$target" "${budget[@]}" "${dictionary[@]}" \
      -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$out/artifacts/$target-" -print_final_stats=1 "$corpus" "Fuzz/Corpus/$target" "${extra_seeds[@]}" \
      > "$out/$target.log" 2>&1; then
    echo "fuzz: $target FAILED; the input is in $out/artifacts/, the log in $out/$target.log"
    grep -E "ERROR|Fatal error|runtime failure|SUMMARY" "$out/$target.log" | head -5 || true
    return 1
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added" "$out/$target.log" | sed "s/^/fuzz: $target /"
}

# FUZZ_JOBS targets at once (a core each by default): each build and each
# run is one thread, and eight in a row left a core idle for four minutes.
for target in "${targets[@]}"; do sources "$target" >/dev/null; done
jobs_max=${FUZZ_JOBS:-$(nproc)}
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  rm -f "$out/$target.failed"
  { fuzz_target "$target" || touch "$out/$target.failed"; } > "$out/$target.out" 2>&1 &
done
wait
failed=0
for target in "${targets[@]}"; do
  if [ -e "$out/$target.failed" ]; then cat "$out/$target.out" >&2; failed=1; else cat "$out/$target.out"; fi
done
exit $failed
