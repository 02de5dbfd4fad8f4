import CAdwaita

/// A Swift closure as a GObject signal handler's user data: GObject
/// releases it (through the destroy notify) when the object goes.
private final class SignalAction {
    let run: @MainActor () -> Void

    init(_ run: @escaping @MainActor () -> Void) {
        self.run = run
    }
}

/// Runs `action` on each emission of `signal` (one whose handler takes only
/// the emitter and user data: "clicked", "activate"). GTK emits on its own
/// thread, the main one, which is the main actor's once
/// `gtk_bridge_serve_main_actor` runs.
///
/// `g_signal_connect` is a macro, which Swift can't call; this is what it
/// expands to, with a `@convention(c)` trampoline that finds the closure in
/// the user data.
@MainActor
func connect(_ instance: UnsafeMutableRawPointer?, _ signal: String, _ action: @escaping @MainActor () -> Void) {
    let handler: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
        guard let data else { return }
        let action = Unmanaged<SignalAction>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { action.run() }
    }
    let release: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
        guard let data else { return }
        Unmanaged<SignalAction>.fromOpaque(data).release()
    }
    let box = Unmanaged.passRetained(SignalAction(action)).toOpaque()
    g_signal_connect_data(
        instance, signal, unsafeBitCast(handler, to: GCallback.self), box, release, GConnectFlags(rawValue: 0))
}
