/// Whether traffic over an interface may cost money or be capped, as NWPath's
/// `isExpensive` and GLib's `network-metered` say: apps defer large downloads
/// and background sync on a metered path.
public enum Metering: String, Codable, Sendable, CaseIterable {
    /// Not metered as far as anyone knows.
    case no
    /// Metered, as the configuration says (`[metered]` in reachd.conf).
    case yes
    /// Guessed metered from the link's kind: a cellular modem, PPP, a phone's
    /// USB or Bluetooth tethering.
    case guessed

    /// Metered, said or guessed.
    public var isMetered: Bool {
        switch self {
        case .no: false
        case .yes, .guessed: true
        }
    }
}
