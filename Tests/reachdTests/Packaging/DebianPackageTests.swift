import Foundation
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The package `make test` builds with `make deb`.
enum DebianPackage {
    static let path = built("reachd")
    /// The GIO module's package, built beside it.
    static let gioPath = built("reachd-gio")
    static func built(_ package: String) -> String {
        TestInstallation.packageRoot
            .appendingPathComponent(".build/\(package)_\(ReachdVersion.current)_\(architecture).deb").path
    }
    static var architecture: String {
        (try? String(contentsOfFile: "/var/lib/dpkg/arch", encoding: .utf8))?
            .split(separator: "\n").first.map(String.init) ?? "amd64"
    }
    static var available: Bool { !TestScope.unitOnly && FileManager.default.fileExists(atPath: path) }
    static let reason: Comment = TestScope.unitOnly ? "\(TestScope.unitOnlyReason)" : "needs `make deb`, which `make test` runs first"
    static var canBootstrap: Bool { FileManager.default.isExecutableFile(atPath: "/usr/sbin/debootstrap") }
}

@Suite("The Debian package", .enabled(if: DebianPackage.available, DebianPackage.reason))
struct DebianPackageTests {
    @Test func itsDependenciesAreTheBinarysLibrariesAndNothingOfSwifts() async throws {
        let fields = try await Subprocess.run(["/usr/bin/dpkg-deb", "-f", DebianPackage.path, "Depends", "Version"])
        #expect(fields.output.contains("Version: \(ReachdVersion.current)\n"))
        for package in ["libc6", "libnl-3-200", "libnl-route-3-200", "libsystemd0", "init-system-helpers"] {
            #expect(fields.output.contains(package), "\(package) in \(fields.output)")
        }
        let contents = try await Subprocess.run(["/usr/bin/dpkg-deb", "-c", DebianPackage.path])
        for path in ["./usr/bin/reachd", "./usr/lib/systemd/system/reachd.socket", "./usr/lib/sysusers.d/reachd.conf",
                     "./etc/reachd/reachd.conf",
                     "./usr/share/man/man1/reachd.1", "./usr/share/doc/reachd/copyright"] {
            #expect(contents.output.contains(" \(path)\n"), "\(path)")
        }
        let conffiles = try await Subprocess.run(["/usr/bin/dpkg-deb", "-I", DebianPackage.path, "conffiles"])
        #expect(conffiles.output == "/etc/reachd/reachd.conf\n", "an administrator's edits survive upgrades")
        #expect(!fields.output.contains("glib"), "a server's reachd pulls in no GLib: \(fields.output)")
        #expect(!contents.output.contains("gio/modules"), "the module is reachd-gio's")
    }

    @Test func theModulesPackageHoldsTheModuleAndNeedsTheDaemon() async throws {
        let fields = try await Subprocess.run(["/usr/bin/dpkg-deb", "-f", DebianPackage.gioPath, "Depends", "Version"])
        #expect(fields.output.contains("Version: \(ReachdVersion.current)\n"))
        for package in ["libglib2.0-0", "libjson-glib-1.0-0", "reachd (= \(ReachdVersion.current))"] {
            #expect(fields.output.contains(package), "\(package) in \(fields.output)")
        }
        let directory = try await Subprocess.run(["/usr/bin/pkg-config", "--variable=giomoduledir", "gio-2.0"])
        let contents = try await Subprocess.run(["/usr/bin/dpkg-deb", "-c", DebianPackage.gioPath])
        for path in [".\(directory.output.trimmingCharacters(in: .whitespacesAndNewlines))/libgioreachd.so",
                     "./usr/share/doc/reachd-gio/copyright"] {
            #expect(contents.output.contains(" \(path)\n"), "\(path) in \(contents.output)")
        }
        // Loaded into every GLib program: it must not bring Swift's runtime.
        let tree = FileManager.default.temporaryDirectory.appendingPathComponent("rd-gio-deb-\(getpid())")
        defer { try? FileManager.default.removeItem(at: tree) }
        let unpacked = try await Subprocess.run(["/usr/bin/dpkg-deb", "-x", DebianPackage.gioPath, tree.path])
        try #require(unpacked.status == 0, "\(unpacked.error)")
        let module = tree.path + directory.output.trimmingCharacters(in: .whitespacesAndNewlines) + "/libgioreachd.so"
        let needed = try await Subprocess.run(["/usr/bin/readelf", "-d", module])
        #expect(needed.output.contains("[libgio-2.0.so.0]") && needed.output.contains("[libjson-glib-1.0.so.0]"),
                "\(needed.output)")
        #expect(!needed.output.lowercased().contains("swift"), "\(needed.output)")
    }
}

@Suite(
    "The Debian package on a clean Debian 12 (debootstrap, systemd-nspawn)",
    .enabled(if: DebianPackage.available, DebianPackage.reason),
    .enabled(if: NamespaceSupport.available, NamespaceSupport.reason),
    .enabled(if: DebianPackage.canBootstrap && FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-nspawn"),
             "needs debootstrap and systemd-nspawn (make test installs both)"))
struct DebianPackageContainerTests {
    static let checks = [
        "no-toolchain", "libraries", "version", "socket-enabled", "daemon-answers", "daemon-user", "ipv4-online", "files",
        "gio-cache", "gio-libraries", "gio-picked", "gio-activates", "gio-private-network", "reinstall", "purge",
    ]

    @Test func aptInstallsItAndSystemdRunsItWithoutTheToolchain() async throws {
        let scripts = TestInstallation.packageRoot.appendingPathComponent("Tests/reachdTests/Systemd")
        // Built once per machine (about 40 s), then only read: each run boots an overlay.
        let base = try await Subprocess.run(["/bin/bash", scripts.appendingPathComponent("debian-root.sh").path],
                                            timeout: .seconds(600))
        try #require(base.status == 0, "debootstrap: \(base.error.suffix(3000))")
        let lower = base.output.trimmingCharacters(in: .whitespacesAndNewlines)

        let network = try await TestNetwork()
        try await network.inHost("link set vh up", "addr add 10.77.0.2/24 dev vh", "route add default via 10.77.0.1")
        let scratch = network.directory
        let root = scratch.appendingPathComponent("root").path
        // The container's / is `root`: one others may write would make the
        // GIO module (rightly) distrust every socket under it.
        for directory in ["root", "upper", "work", "out"] { _ = try network.folder(directory) }
        let mount = try await Subprocess.run([
            "/bin/mount", "-t", "overlay", "overlay", "-o",
            "lowerdir=\(lower),upperdir=\(scratch.appendingPathComponent("upper").path),workdir=\(scratch.appendingPathComponent("work").path)",
            root,
        ])
        try #require(mount.status == 0, "overlay: \(mount.error)")
        defer { _ = Subprocess.runBlocking(["/bin/umount", "-l", root]) }

        let package = "/root/" + URL(fileURLWithPath: DebianPackage.path).lastPathComponent
        try FileManager.default.copyItem(atPath: DebianPackage.path, toPath: root + package)
        let gioPackage = "/root/" + URL(fileURLWithPath: DebianPackage.gioPath).lastPathComponent
        try FileManager.default.copyItem(atPath: DebianPackage.gioPath, toPath: root + gioPackage)
        // A GLib program, from the same Debian's GLib as the container's.
        let probe = try await Subprocess.run([
            "/bin/sh", "-c", "cc -o \"$1\" \"$0\" $(pkg-config --cflags --libs gio-2.0)",
            scripts.appendingPathComponent("gio-probe.c").path, root + "/root/gio-probe",
        ])
        try #require(probe.status == 0, "building the GLib probe: \(probe.error)")
        try FileManager.default.copyItem(
            atPath: scripts.appendingPathComponent("deb-check.sh").path, toPath: root + "/root/deb-check.sh")
        try ReachdVersion.current.write(
            toFile: scratch.appendingPathComponent("out/version").path, atomically: true, encoding: .utf8)
        try """
            [Unit]
            Description=reachd package checks
            After=reachd.socket
            SuccessAction=poweroff-force
            FailureAction=poweroff-force

            [Service]
            Type=oneshot
            ExecStart=/bin/bash /root/deb-check.sh
            """.write(toFile: root + "/etc/systemd/system/check.service", atomically: true, encoding: .utf8)

        // apt, as a user would, with no network: libnl comes from the packages
        // the root fetched when it was made, and only if Depends names it.
        // No systemd runs yet, so postinst only enables the socket.
        let install = try await Subprocess.run([
            "/usr/bin/systemd-nspawn", "-q", "-D", root, "-M", "reachd-deb-\(getpid())", "--register=no", "--keep-unit",
            "--private-network", "/usr/bin/env", "DEBIAN_FRONTEND=noninteractive",
            "apt-get", "install", "-y", "--no-install-recommends", package, gioPackage,
        ], timeout: .seconds(120))
        try #require(install.status == 0, "apt install: \(install.output.suffix(3000))\(install.error.suffix(3000))")
        for library in ["libnl-route-3-200", "libglib2.0-0", "libjson-glib-1.0-0"] {
            #expect(install.output.contains(library), "apt pulled in \(library): \(install.output.suffix(2000))")
        }

        let container = try await Subprocess.run([
            "/usr/bin/systemd-nspawn", "-q", "-D", root, "-M", "reachd-deb-\(getpid())", "-b", "--register=no", "--keep-unit",
            "--network-namespace-path=/run/netns/\(network.host)", "--capability=CAP_NET_ADMIN",
            "--bind=\(scratch.appendingPathComponent("out").path):/out",
            "systemd.wants=check.service",
        ], timeout: .seconds(150))

        let results = (try? String(contentsOf: scratch.appendingPathComponent("out/results"), encoding: .utf8)) ?? ""
        let activation = (try? String(contentsOf: scratch.appendingPathComponent("out/activation"), encoding: .utf8)) ?? ""
        let context = "container exit \(container.status)\n\(container.error.suffix(2000))\nresults:\n\(results)\(activation)"
        #expect(results.hasSuffix("done\n"), "the checks ran to the end: \(context)")
        for check in Self.checks {
            #expect(results.contains("PASS \(check)\n"), "\(check): \(context)")
        }
    }
}
