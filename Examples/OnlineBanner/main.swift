// A program that shows whether the host is online and says so at each change:
// the callback side of the Reachability library, for code with a main loop of
// its own (GLib's, a server's) rather than Swift concurrency. The monitor's
// thread calls the handler; while the network is quiet this program makes no
// system calls at all (bench/latency.py counts its wake-ups).
//
//     swift run OnlineBanner
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// One line on stdout at once, not when a buffer fills.
func say(_ text: String) {
    var line = Array((text + "\n").utf8)
    _ = write(1, &line, line.count)
}

let monitor = ReachabilityMonitor()
let subscription = monitor.onChange { status in
    let path = status.primary.map { " via \($0.interface)" } ?? ""
    say((status.online ? "online\(path)" : "offline (\(status.reachability.rawValue))") + " from the \(status.source.rawValue)")
}

// The program's own main loop would run here; this one only waits for signals.
while true { pause() }
