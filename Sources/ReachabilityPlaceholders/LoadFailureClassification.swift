import Foundation

/// A load's `body` throws a `LoadFailure` to say exactly what went wrong
/// (``PlaceholderController/load(_:_:)``).
extension LoadFailure: Error {}

extension LoadFailure {
    /// What an HTTP status says about a load: `nil` for success (1xx to 3xx),
    /// ``client(status:)`` for 4xx and ``server(status:)`` for everything else.
    ///
    /// ```swift
    /// let (data, response) = try await URLSession.shared.data(from: url)
    /// if let failure = LoadFailure(httpStatus: (response as? HTTPURLResponse)?.statusCode ?? 0) { throw failure }
    /// ```
    public init?(httpStatus status: Int) {
        switch status {
        case 100..<400: return nil
        case 400..<500: self = .client(status: status)
        default: self = .server(status: status)
        }
    }

    /// What an error thrown by a load means to the placeholder engine: a
    /// `LoadFailure` as it is, a `URLError` by its code, a `DecodingError`
    /// as ``decoding``, a `CancellationError` as ``cancelled``. Any other
    /// error counts as a server that could not be reached
    /// (`unreachable(.refused)`): throw a `LoadFailure` to say otherwise.
    ///
    /// ```swift
    /// do {
    ///     _ = try await URLSession.shared.data(from: url)
    /// } catch {
    ///     print(LoadFailure(error))   // unreachable(timeout), offline, ...
    /// }
    /// ```
    public init(_ error: any Error) {
        switch error {
        case let failure as LoadFailure: self = failure
        case let error as URLError: self = Self(error.code)
        case is DecodingError: self = .decoding
        case is CancellationError: self = .cancelled
        default: self = .unreachable(.refused)
        }
    }

    private init(_ code: URLError.Code) {
        switch code {
        case .notConnectedToInternet, .networkConnectionLost, .dataNotAllowed, .internationalRoamingOff:
            self = .offline
        case .timedOut: self = .unreachable(.timeout)
        case .cannotFindHost, .dnsLookupFailed: self = .unreachable(.dns)
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
             .clientCertificateRequired:
            self = .unreachable(.tls)
        case .cancelled: self = .cancelled
        case .cannotDecodeContentData, .cannotDecodeRawData, .cannotParseResponse: self = .decoding
        default: self = .unreachable(.refused)
        }
    }
}
