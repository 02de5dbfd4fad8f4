/// A value of the wire protocol spelled as a string from a fixed list that a
/// newer daemon may extend: a connectivity verdict, a reason, a metering.
///
/// An older client decodes a value it has never seen to the type's
/// `unrecognized` case, which keeps the string, instead of rejecting the whole
/// status: docs/PROTOCOL.md says what each type's unrecognized value means to
/// a client (an unrecognized verdict is not `full`, for one). `allCases` lists
/// the values this version knows.
///
/// ```swift
/// switch status.connectivity {
/// case .full: print("online")
/// case .unknown, .none, .portal, .limited: print("not confirmed")
/// case .unrecognized(let verdict): print("a newer daemon says \(verdict)")
/// }
/// ```
public protocol ProtocolValue: RawRepresentable<String>, CaseIterable, Codable, Sendable, Hashable
where AllCases == [Self] {
    /// A value this version does not know, as the daemon spelled it.
    static func unrecognized(_ rawValue: String) -> Self
}

extension ProtocolValue {
    /// The known value spelled `rawValue`, else `.unrecognized(rawValue)`: never `nil`.
    public init(rawValue: String) {
        self = Self.named(rawValue)
    }

    public init(from decoder: any Decoder) throws {
        self = Self.named(try decoder.singleValueContainer().decode(String.self))
    }

    private static func named(_ rawValue: String) -> Self {
        allCases.first { $0.rawValue == rawValue } ?? .unrecognized(rawValue)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
