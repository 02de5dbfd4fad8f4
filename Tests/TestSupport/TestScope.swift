import Foundation

/// Which tests run. `make check` sets `REACHD_TESTS=unit`: the suites that
/// need root and network namespaces, a staged install or the .deb skip,
/// saying so, and the rest runs in well under a minute. `make test` (CI)
/// runs everything.
package enum TestScope {
    package static let unitOnly = ProcessInfo.processInfo.environment["REACHD_TESTS"] == "unit"

    /// The skip reason under `make check`.
    package static let unitOnlyReason = "`make check` runs the unit tests only; `make test` runs this too"
}
