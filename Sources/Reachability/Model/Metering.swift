/// Whether traffic over an interface may cost money or be capped, as NWPath's
/// `isExpensive` and GLib's `network-metered` say: apps defer large downloads
/// and background sync on a metered path.
public enum Metering: ProtocolValue {
    /// Not metered as far as anyone knows.
    case no
    /// Metered, as the configuration says (`[metered]` in reachd.conf).
    case yes
    /// Guessed metered from the link's kind: a cellular modem, PPP, a phone's
    /// USB or Bluetooth tethering.
    case guessed
    /// A metering this version does not know, from a newer daemon. It counts
    /// as metered: deferring a download is cheaper than a surprise bill.
    case unrecognized(String)

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [Metering] = [.no, .yes, .guessed]

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .no: "no"
        case .yes: "yes"
        case .guessed: "guessed"
        case .unrecognized(let rawValue): rawValue
        }
    }

    /// Metered, said or guessed (or said in words this version doesn't know).
    public var isMetered: Bool {
        switch self {
        case .no: false
        case .yes, .guessed, .unrecognized: true
        }
    }
}
