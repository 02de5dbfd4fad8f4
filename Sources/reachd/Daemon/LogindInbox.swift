import CSystemd

/// What sd-bus's callbacks for ``SleepWatch`` saw on the system bus, left
/// for the watch to take after each `sd_bus_process`: logind's name's owner,
/// whether it said the host resumed, and the bus's answer to the match.
///
/// The callbacks are C function pointers with this inbox as their userdata:
/// they decide only what a message says, and the watch acts on it.
final class LogindInbox {
    static let login1 = "org.freedesktop.login1"
    static let busDriver = "org.freedesktop.DBus"

    /// The bus's answer to adding the match for `PrepareForSleep`.
    enum MatchAnswer: Equatable {
        case added
        /// The error's D-Bus name.
        case refused(String)
    }

    var resumed = false
    /// The unique name owning `org.freedesktop.login1`; `nil` while none
    /// does, or before the bus said.
    var loginOwner: String?
    /// Set once the bus answered the match, until the watch took it.
    var matchAnswer: MatchAnswer?

    private static func inbox(_ userdata: UnsafeMutableRawPointer) -> LogindInbox {
        Unmanaged<LogindInbox>.fromOpaque(userdata).takeUnretainedValue()
    }

    /// `PrepareForSleep(b)`: `true` before the host sleeps, `false` once it
    /// woke. Taken from logind's name's owner only.
    static let prepareForSleep: sd_bus_message_handler_t = { message, userdata, _ in
        var sleeping: Int32 = 1
        guard let message, let userdata else { return 0 }
        let inbox = inbox(userdata)
        guard let sender = sd_bus_message_get_sender(message), let owner = inbox.loginOwner,
            String(cString: sender) == owner
        else { return 0 }
        guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &sleeping) >= 0 else { return 0 }
        if sleeping == 0 { inbox.resumed = true }
        return 0
    }

    /// `NameOwnerChanged(name, old, new)` from the bus itself (whose name no
    /// peer can send under), for logind's name: its new owner.
    static let nameOwnerChanged: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata, let sender = sd_bus_message_get_sender(message),
            String(cString: sender) == busDriver
        else { return 0 }
        var name: UnsafePointer<CChar>?
        var old: UnsafePointer<CChar>?
        var new: UnsafePointer<CChar>?
        let s = CChar(UInt8(ascii: "s"))
        guard sd_bus_message_read_basic(message, s, &name) >= 0, sd_bus_message_read_basic(message, s, &old) >= 0,
            sd_bus_message_read_basic(message, s, &new) >= 0, let name, String(cString: name) == login1
        else { return 0 }
        let owner = new.map { String(cString: $0) } ?? ""
        inbox(userdata).loginOwner = owner.isEmpty ? nil : owner
        return 0
    }

    /// `GetNameOwner`'s answer: the owner, or an error when nobody owns it.
    static let ownerAnswer: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        if let error = sd_bus_message_get_error(message), sd_bus_error_is_set(error) != 0 {
            inbox(userdata).loginOwner = nil
            return 0
        }
        var owner: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &owner) >= 0, let owner else { return 0 }
        inbox(userdata).loginOwner = String(cString: owner)
        return 0
    }

    /// The bus's answer to adding the match.
    static let matchAdded: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        if let error = sd_bus_message_get_error(message), sd_bus_error_is_set(error) != 0 {
            inbox(userdata).matchAnswer = .refused(error.pointee.name.map { String(cString: $0) } ?? "an error")
        } else {
            inbox(userdata).matchAnswer = .added
        }
        return 0
    }
}
