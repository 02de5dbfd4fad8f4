/// The rules for `portal_url`: what a captive portal's `Location` may become
/// before reachd publishes it, and what a client accepts from a daemon.
///
/// A portal is run by whoever runs the Wi-Fi, and apps open this URL in a
/// browser ("Sign in"), so it is only ever an absolute `http` or `https` URL
/// with a host, without user information (`http://bank.example@evil/`), of
/// at most ``maximumLength`` bytes. A relative reference is resolved against
/// the URL the check asked, as RFC 3986 section 5 says. Spaces and other
/// bytes a URI may not hold are percent-encoded, as browsers do; a control
/// character makes it no URL at all. ``URIReference`` splits and resolves,
/// ``HostPort`` reads the host.
package enum PortalURL {
    /// What browsers and servers commonly accept, and far more than a sign-in page needs.
    package static let maximumLength = 2048

    /// `location` resolved against `base`, if the result is a URL to publish:
    /// `/guest/login.php` against `http://check.example/generate_204` is
    /// `http://check.example/guest/login.php`.
    package static func resolve(_ location: String, against base: String) -> String? {
        guard let reference = URIReference(parsing: location), let base = URIReference(parsing: base),
            base.scheme != nil
        else { return nil }
        return accepted(reference.resolved(against: base))
    }

    /// `url` if it is one to publish (a daemon's `portal_url`, checked again
    /// by the client), else `nil`.
    package static func validated(_ url: String) -> String? {
        guard let reference = URIReference(parsing: url), reference.scheme != nil else { return nil }
        return accepted(reference.resolved(against: reference))
    }

    private static func accepted(_ target: URIReference) -> String? {
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let authority = target.authority, !authority.contains("@"),
            (try? HostPort(parsing: authority[...], as: .url)) != nil
        else { return nil }
        var normalized = target
        normalized.scheme = scheme
        let text = normalized.text
        return text.utf8.count <= maximumLength ? text : nil
    }
}
