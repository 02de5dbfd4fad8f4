/// The wire protocol's version. Adding keys does not change it; removing or
/// changing the meaning of one does. docs/PROTOCOL.md is the contract.
public enum ProtocolVersion {
    /// The version this library speaks; a daemon sending another is a
    /// ``ProtocolError/versionMismatch(received:)``.
    public static let current = 1
}
