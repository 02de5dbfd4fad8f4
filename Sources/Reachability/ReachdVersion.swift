/// reachd's version: the one place it is written. `reachd --version`, the
/// connectivity check's User-Agent and the man page take it from here, and a
/// test checks that CHANGELOG.md's newest entry names it.
package enum ReachdVersion {
    package static let current = "0.14.0"
}
