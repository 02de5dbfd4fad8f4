// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "reachd",
    products: [
        .library(name: "Reachability", targets: ["Reachability"]),
        // Which placeholder a list shows: a UI policy on top of the statuses,
        // apart so that a program that only asks about the network imports none of it.
        .library(name: "ReachabilityPlaceholders", targets: ["ReachabilityPlaceholders"]),
        .executable(name: "reachd", targets: ["reachd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The daemon's metrics in Prometheus' text format (issue 27).
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `swift package generate-documentation`: the DocC catalog in Sources/Reachability.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // pkg-config's libnl-route-3.0 requires libnl-3.0, so this one line gives
        // the include path and both libraries.
        .systemLibrary(
            name: "CNetlink",
            pkgConfig: "libnl-route-3.0",
            providers: [.apt(["libnl-3-dev", "libnl-route-3-dev"])]
        ),
        // epoll, which Swift's Glibc module leaves out: the daemon's loop.
        .systemLibrary(name: "CEventPoll"),
        // sched_setattr(2), which glibc before 2.41 does not wrap: the short
        // time slice reachd's own loops ask for.
        .systemLibrary(name: "CScheduling"),
        // sd-bus, for logind's word that the host resumed from suspend: the
        // daemon's alone (libsystemd0 is on every systemd host).
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(
            name: "Reachability",
            dependencies: [
                "CNetlink",
                "CEventPoll",
                "CScheduling",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "ReachabilityPlaceholders",
            dependencies: ["Reachability"]
        ),
        .executableTarget(
            name: "reachd",
            dependencies: [
                "Reachability",
                "CSystemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // The example from the README: a terminal list viewer on the placeholder engine.
        .executableTarget(
            name: "ListViewer",
            dependencies: [
                "Reachability",
                "ReachabilityPlaceholders",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/ListViewer",
            exclude: ["item-server.py"]
        ),
        // The callback API without Swift concurrency: the library client that
        // bench/latency.py counts the idle wake-ups of.
        .executableTarget(
            name: "OnlineBanner",
            dependencies: ["Reachability"],
            path: "Examples/OnlineBanner"
        ),
        // What one monitor following N destinations costs in threads and
        // descriptors: `make bench` prints it, a test bounds it.
        .executableTarget(
            name: "MonitorCost",
            dependencies: ["Reachability"],
            path: "bench/MonitorCost"
        ),
        // What both test targets share: seeded random input, a fake daemon,
        // waiting on a condition, the package's root.
        .target(
            name: "TestSupport",
            dependencies: ["Reachability"],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "ReachabilityTests",
            // CNetlink: the hand-written route requests are compared with libnl's.
            dependencies: ["Reachability", "ReachabilityPlaceholders", "TestSupport", "CNetlink"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "reachdTests",
            dependencies: [
                "reachd", "ListViewer", "OnlineBanner", "MonitorCost", "Reachability", "ReachabilityPlaceholders",
                "TestSupport",
            ],
            // Scripts run in the systemd containers by path, not resources.
            exclude: ["Systemd", "Harness/hold-connections.py", "Harness/flood-reach.py", "Harness/impostor-daemon.py", "Harness/tcp-traffic.py", "GLibApps/gio-app.py", "GLibApps/networkmanager-standin.py", "GLibApps/module-lifecycle.c", "Desktop/accessible-tree.py"]
        ),
    ]
)
