import Foundation
import TestSupport

/// A system bus of the test's own: a real dbus-daemon on a socket in
/// `directory`, open to everyone, with a logind stand-in that can say the
/// host goes to sleep and wakes up (logind's `PrepareForSleep` signal, sent
/// under logind's name).
final class TestSystemBus: @unchecked Sendable {
    private let process: Subprocess
    /// What `DBUS_SYSTEM_BUS_ADDRESS` says to reach it.
    let address: String

    init(in directory: URL) async throws {
        let socket = directory.appendingPathComponent("system_bus_socket").path
        let configuration = directory.appendingPathComponent("system-bus.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """.write(to: configuration, atomically: true, encoding: .utf8)
        address = "unix:path=\(socket)"
        process = try Subprocess(["/usr/bin/dbus-daemon", "--nofork", "--print-address", "--config-file=\(configuration.path)"])
        _ = try await eventually("the system bus listens") { process.outputLines.first }
    }

    deinit { process.signal(SIGTERM) }

    /// Sends `PrepareForSleep` with each value in turn, as logind does
    /// around a suspend (`true`, then `false` on waking).
    func prepareForSleep(_ values: Bool...) async throws {
        let standIn = """
            import sys
            from gi.repository import Gio, GLib
            flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
            bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
            bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                          GLib.Variant("(su)", ("org.freedesktop.login1", 4)), None, 0, -1, None)
            for value in sys.argv[2:]:
                bus.emit_signal(None, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep",
                                GLib.Variant("(b)", (value == "true",)))
            bus.flush_sync(None)
            """
        let sent = try await Subprocess.run(["/usr/bin/python3", "-c", standIn, address] + values.map { "\($0)" })
        guard sent.status == 0 else { throw HarnessError.commandFailed("the logind stand-in: \(sent.error)") }
    }

    /// Connects to the bus and leaves, `count` times: what every D-Bus
    /// client does, each a change of owner of its unique name.
    func comeAndGo(count: Int) async throws {
        let visitor = """
            import sys
            from gi.repository import Gio
            flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
            for _ in range(int(sys.argv[2])):
                Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None).close_sync(None)
            """
        let ran = try await Subprocess.run(["/usr/bin/python3", "-c", visitor, address, "\(count)"])
        guard ran.status == 0 else { throw HarnessError.commandFailed("the bus visitor: \(ran.error)") }
    }

    /// Sends `PrepareForSleep(false)` `count` times, as `user`, to every
    /// other peer of the bus by its unique name (unicast, which the bus
    /// routes from anyone), without owning logind's name: a spoofed resume.
    func spoofResume(as user: Int, count: Int) async throws {
        let spoofer = """
            import sys
            from gi.repository import Gio, GLib
            flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
            bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
            names = bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListNames",
                                  None, None, 0, -1, None).unpack()[0]
            peers = [n for n in names if n.startswith(":") and n != bus.get_unique_name()]
            for _ in range(int(sys.argv[2])):
                for peer in peers:
                    bus.emit_signal(peer, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep",
                                    GLib.Variant("(b)", (False,)))
            bus.flush_sync(None)
            print(len(peers))
            """
        let sent = try await Subprocess.run(TestNetwork.asUser(user) + ["/usr/bin/python3", "-c", spoofer, address, "\(count)"])
        guard sent.status == 0, Int(sent.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0 else {
            throw HarnessError.commandFailed("the spoofer reached no peer: \(sent.output) \(sent.error)")
        }
    }
}
