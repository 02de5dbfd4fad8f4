// swift-tools-version:6.1
import PackageDescription

// A package of its own, so that reachd's build, `make run` and the library's
// users need no GTK: `swift build --package-path Examples/GtkListViewer`.
let package = Package(
    name: "GtkListViewer",
    products: [
        .executable(name: "gtk-list-viewer", targets: ["GtkListViewer"]),
    ],
    dependencies: [
        // By path, under the root's own name: a path dependency's identity is
        // its directory's name, which is whatever the clone was called.
        .package(name: "reachd", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // GTK 4 and libadwaita, through pkg-config (SwiftPM warns that its
        // -pthread is a prohibited flag; the link has it anyway).
        .systemLibrary(
            name: "CAdwaita",
            pkgConfig: "libadwaita-1",
            providers: [.apt(["libadwaita-1-dev"])]
        ),
        // What Swift can't import: a variadic function, and libdispatch's main-queue hook.
        .target(name: "GtkBridge", dependencies: ["CAdwaita"]),
        .executableTarget(
            name: "GtkListViewer",
            dependencies: [
                "CAdwaita",
                "GtkBridge",
                .product(name: "Reachability", package: "reachd"),
                .product(name: "ReachabilityPlaceholders", package: "reachd"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ]
)
