/// A link's RFC 2863 operational state (IF_OPER_*), as the kernel reports it.
enum OperationalState: Sendable, Hashable {
    case unknown, notPresent, down, lowerLayerDown, testing, dormant, up
    case other(UInt8)

    init(kernelValue value: UInt8) {
        switch value {
        case 0: self = .unknown
        case 1: self = .notPresent
        case 2: self = .down
        case 3: self = .lowerLayerDown
        case 4: self = .testing
        case 5: self = .dormant
        case 6: self = .up
        case let other: self = .other(other)
        }
    }

    /// The kernel's names, as `ip link` prints them; else the number.
    var name: String {
        switch self {
        case .unknown: "unknown"
        case .notPresent: "notpresent"
        case .down: "down"
        case .lowerLayerDown: "lowerlayerdown"
        case .testing: "testing"
        case .dormant: "dormant"
        case .up: "up"
        case .other(let value): "\(value)"
        }
    }
}
