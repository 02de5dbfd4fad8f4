/// Why ``NetworkStatus/connectivity`` is what it is: what the connectivity
/// check's probe got, or the evidence that made the verdict without one.
/// The raw values are the wire spelling (`connectivity_reason`).
///
/// ```swift
/// if status.connectivity == .limited, let reason = status.connectivityReason {
///     print("no Internet: \(reason)")  // "no Internet: connections through this path fail"
/// }
/// ```
public enum ConnectivityReason: ProtocolValue, CustomStringConvertible {
    /// The check got the answer it expects (`full`).
    case expectedAnswer
    /// Something else answered the check: a captive portal (`portal`).
    case portalAnswer
    /// The check got no answer in time.
    case noAnswer
    /// The check server refused the connection.
    case refused
    /// The check server's address is unreachable.
    case unreachable
    /// The check host's name did not resolve.
    case nameUnresolved
    /// The connection closed without an HTTP answer.
    case brokenAnswer
    /// The check server answered with an error (4xx, 5xx).
    case errorAnswer
    /// The gateway stopped answering address resolution (its neighbour
    /// entry turned `FAILED`): `limited` with no probe.
    case gatewayUnanswered
    /// The host's own connections through the path got nothing back, and
    /// the probe they started found no Internet either.
    case connectionsFail
    /// The check host has no address of the family: its path was not
    /// probed (`unknown` where no other family decides).
    case noCheckAddress
    /// A reason this version does not know, from a newer daemon: words to
    /// show, with no bearing on `online`.
    case unrecognized(String)

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [ConnectivityReason] = [
        .expectedAnswer, .portalAnswer, .noAnswer, .refused, .unreachable, .nameUnresolved, .brokenAnswer, .errorAnswer,
        .gatewayUnanswered, .connectionsFail, .noCheckAddress,
    ]

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .expectedAnswer: "expected_answer"
        case .portalAnswer: "portal_answer"
        case .noAnswer: "no_answer"
        case .refused: "refused"
        case .unreachable: "unreachable"
        case .nameUnresolved: "name_unresolved"
        case .brokenAnswer: "broken_answer"
        case .errorAnswer: "error_answer"
        case .gatewayUnanswered: "gateway_unanswered"
        case .connectionsFail: "connections_fail"
        case .noCheckAddress: "no_check_address"
        case .unrecognized(let rawValue): rawValue
        }
    }

    /// In words, for a person.
    public var description: String {
        switch self {
        case .expectedAnswer: "the check got its expected answer"
        case .portalAnswer: "a captive portal answered the check"
        case .noAnswer: "the check got no answer in time"
        case .refused: "the check's connection was refused"
        case .unreachable: "the check server is unreachable"
        case .nameUnresolved: "the check host's name did not resolve"
        case .brokenAnswer: "the check's connection closed without an HTTP answer"
        case .errorAnswer: "the check server answered with an error"
        case .gatewayUnanswered: "the gateway stopped answering address resolution"
        case .connectionsFail: "connections through this path fail"
        case .noCheckAddress: "the check host has no address of this family"
        case .unrecognized(let rawValue): rawValue
        }
    }
}
