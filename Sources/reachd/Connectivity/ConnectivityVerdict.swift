import Reachability

/// How a probe ended, before it is judged.
enum ProbeOutcome: Equatable, Sendable {
    case answered(HTTPResponse)
    case failed(ProbeFailure)
    /// The resolver answered that the check host has no address of the
    /// family: nothing was asked of its path, which is neither working
    /// nor not (a dual-stack host whose check host has no AAAA).
    case noAddress
}

/// Why a probe got no answer: each means the network is there but not the
/// Internet (`limited`).
enum ProbeFailure: String, Equatable, Sendable {
    case dns = "the name did not resolve"
    case refused = "the connection was refused"
    case timeout = "no answer in time"
    case unreachable = "the address is unreachable"
    case broken = "the connection closed without an HTTP answer"

    /// As a status says it.
    var reason: ConnectivityReason {
        switch self {
        case .dns: .nameUnresolved
        case .refused: .refused
        case .timeout: .noAnswer
        case .unreachable: .unreachable
        case .broken: .brokenAnswer
        }
    }
}

/// A probe's verdict: the `connectivity` of one family, and where a portal
/// sends the user.
struct ConnectivityVerdict: Equatable, Sendable {
    var connectivity: Connectivity
    var portalURL: String?
    /// Why: what the probe got, or the evidence that made the verdict without one.
    var reason: ConnectivityReason
    /// The check host's name did not resolve, but the server answered at the
    /// address that last answered: names fail while the path works.
    var namesFail = false

    init(connectivity: Connectivity, reason: ConnectivityReason, portalURL: String? = nil, namesFail: Bool = false) {
        self.connectivity = connectivity
        self.reason = reason
        self.portalURL = portalURL
        self.namesFail = namesFail
    }

    /// Android's and NetworkManager's rules: the expected answer is `full`; a
    /// redirect, a 511 (Network Authentication Required, RFC 6585, made for
    /// portals) or another 2xx answer is a `portal`; no answer, or a broken one
    /// (4xx, 5xx: the check server's, not a portal's), is `limited`.
    ///
    /// A redirect's `Location`, resolved against `url` (the URL asked), is the
    /// portal's URL when ``PortalURL`` accepts it; a portal that redirects to
    /// `file:` or `javascript:` is a portal without a URL.
    static func judge(
        _ outcome: ProbeOutcome, expecting expectation: ConnectivityCheck.Expectation, asked url: String
    ) -> ConnectivityVerdict {
        let response: HTTPResponse
        switch outcome {
        case .answered(let answer): response = answer
        case .failed(let failure): return ConnectivityVerdict(connectivity: .limited, reason: failure.reason)
        case .noAddress: return ConnectivityVerdict(connectivity: .none, reason: .noCheckAddress)
        }
        if matches(response, expectation) { return ConnectivityVerdict(connectivity: .full, reason: .expectedAnswer) }
        switch response.status {
        case 300...399:
            let location = response.header("Location").flatMap { PortalURL.resolve($0, against: url) }
            return ConnectivityVerdict(connectivity: .portal, reason: .portalAnswer, portalURL: location)
        case 200...299, 511:
            return ConnectivityVerdict(connectivity: .portal, reason: .portalAnswer)
        default:
            return ConnectivityVerdict(connectivity: .limited, reason: .errorAnswer)
        }
    }

    private static func matches(_ response: HTTPResponse, _ expectation: ConnectivityCheck.Expectation) -> Bool {
        switch expectation {
        case .status(let code):
            return response.status == code
        case .header(let name, let value):
            return response.header(name)?.lowercased() == value.lowercased()
        case .bodyPrefix(let text):
            return response.status == 200 && response.bodyPrefix.starts(with: Array(text.utf8))
        }
    }
}
