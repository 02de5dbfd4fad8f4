import Foundation

/// The package's directory, for tests that read its files (the protocol
/// document, the changelog, fuzz seeds) wherever their own file sits.
package let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
