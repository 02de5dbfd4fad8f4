import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The tree `make test` stages with `make install DESTDIR=.build/test-root`
/// (PREFIX /usr/local): the release binary, the units, the man page.
enum TestInstallation {
    static let packageRoot = TestSupport.packageRoot
    /// Where the installed units believe they are.
    static let prefix = "/usr/local"
    /// Where they really are.
    static let staged = packageRoot.appendingPathComponent(".build/test-root/usr/local")
    static let units = staged.appendingPathComponent("lib/systemd/system")
    static let unitNames = [
        "reachd.service", "reachd.socket", "reachd-metrics.socket", "reachd-wait-online.service", "reachd-wait-online@.service",
    ]
    static var available: Bool {
        !TestScope.unitOnly && FileManager.default.isExecutableFile(atPath: staged.appendingPathComponent("bin/reachd").path)
    }
    static let reason: Comment = TestScope.unitOnly
        ? "\(TestScope.unitOnlyReason)" : "needs `make install DESTDIR=.build/test-root`, which `make test` runs first"
}

@Suite("systemd units", .enabled(if: TestInstallation.available, TestInstallation.reason))
struct SystemdUnitTests {
    private var unitFiles: [String] {
        TestInstallation.unitNames.map { TestInstallation.units.appendingPathComponent($0).path }
    }

    @Test func theInstalledUnitsVerifyCleanly() async throws {
        // verify checks that ExecStart= exists: point the staged units at the
        // staged binary, changing nothing else, and find the staged man page.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-verify-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        var copies: [String] = []
        for (name, path) in zip(TestInstallation.unitNames, unitFiles) {
            let unit = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(
                of: "ExecStart=\(TestInstallation.prefix)/", with: "ExecStart=\(TestInstallation.staged.path)/")
            let copy = scratch.appendingPathComponent(name)
            try unit.write(to: copy, atomically: true, encoding: .utf8)
            // As installed, whatever the umask: verify warns of a unit others may write.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy.path)
            copies.append(copy.path)
        }
        let manual = TestInstallation.staged.appendingPathComponent("share/man").path
        let result = try await Subprocess.run(["/usr/bin/env", "MANPATH=\(manual)", "systemd-analyze", "verify"] + copies)
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.error.isEmpty && result.output.isEmpty, "\(result.error)")
    }

    /// 0.8 without Internet sockets; the connectivity check needs AF_INET and
    /// AF_INET6 to any address (its URL is configurable), which costs 0.5,
    /// and PrivateMounts=yes wins back 0.2; without PrivateUsers=, so that the
    /// daemon sees each caller's uid, 0.2 more (the unit says so too); and
    /// sched_setattr out of @resources, for the loop's short time slice, 0.1.
    @Test func theServiceIsHardenedToAnExposureOfOnePointFourOrLess() async throws {
        let result = try await Subprocess.run(
            ["/usr/bin/env", "systemd-analyze", "security", "--offline=true", unitFiles[0]])
        let line = result.output.split(separator: "\n").first { $0.contains("Overall exposure level") } ?? ""
        let score = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        let exposure = try #require(score, "no exposure in: \(result.output)")
        #expect(exposure <= 1.4, "\(line)")
    }

    /// GLib loads modules from its own directory only (GIO_EXTRA_MODULES
    /// aside): `make install` with the system prefix /usr/local puts the
    /// module there, outside the prefix.
    @Test func theGIOModuleGoesWhereGLibLoadsModulesFrom() async throws {
        let directory = try await Subprocess.run(["/usr/bin/pkg-config", "--variable=giomoduledir", "gio-2.0"])
        let module = TestInstallation.packageRoot.appendingPathComponent(".build/test-root").path
            + directory.output.trimmingCharacters(in: .whitespacesAndNewlines) + "/libgioreachd.so"
        #expect(directory.status == 0 && FileManager.default.fileExists(atPath: module), "\(module)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/man"), "needs man (make test installs man-db)"))
    func theManualRendersWithoutWarningsAndSaysWhatAdminsLookFor() async throws {
        let page = TestInstallation.staged.appendingPathComponent("share/man/man1/reachd.1").path
        let warnings = try await Subprocess.run(["/usr/bin/env", "MANWIDTH=100", "man", "--warnings", "-l", page])
        #expect(warnings.status == 0 && warnings.error.isEmpty, "\(warnings.error)")
        for section in ["ENVIRONMENT", "FILES", "EXIT STATUS", "SEE ALSO"] {
            #expect(warnings.output.contains("\n\(section)\n"), "\(section)")
        }
        #expect(warnings.output.contains("/etc/reachd/reachd.conf") && warnings.output.contains("REACHD_WAIT_ONLINE_TIMEOUT"))
        #expect(!warnings.output.contains("docs/PROTOCOL.md"), "points at the installed PROTOCOL.md, not the source tree")
        let protocolDocument = TestInstallation.staged.appendingPathComponent("share/doc/reachd/PROTOCOL.md").path
        #expect(FileManager.default.fileExists(atPath: protocolDocument))
    }

    @Test func installPutsTheBinaryUnitsManualAndCompletionsInPlace() throws {
        let prefix = TestInstallation.staged
        let configuration = TestInstallation.packageRoot.appendingPathComponent(".build/test-root/etc/reachd/reachd.conf")
        #expect(FileManager.default.fileExists(atPath: configuration.path), "the configuration, in SYSCONFDIR")
        for path in ["bin/reachd", "share/man/man1/reachd.1", "lib/systemd/catalog/reachd.catalog", "share/bash-completion/completions/reachd",
                     "share/zsh/site-functions/_reachd", "share/fish/vendor_completions.d/reachd.fish"] {
            #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(path).path), "\(path)")
        }
        let service = try String(contentsOfFile: unitFiles[0], encoding: .utf8)
        #expect(service.contains("ExecStart=/usr/local/bin/reachd daemon"), "the unit points at the installed binary")
        let manual = try String(contentsOf: prefix.appendingPathComponent("share/man/man1/reachd.1"), encoding: .utf8)
        #expect(manual.contains("wait-online"))
    }

    /// Everything `make install` put in place goes again, but the
    /// configuration, which is the administrator's.
    @Test func uninstallRemovesWhatInstallPutButTheConfiguration() async throws {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-uninstall-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }
        let staged = TestInstallation.packageRoot.appendingPathComponent(".build/test-root")
        func files(in root: URL) -> [String] {
            (FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []).filter {
                var directory: ObjCBool = false
                return FileManager.default.fileExists(atPath: root.appendingPathComponent($0).path, isDirectory: &directory)
                    && !directory.boolValue
            }.sorted()
        }
        // Once, in a full run here, everything but the GIO module was left
        // behind, make's status 0: what a copy still being written during
        // the uninstall would leave (`cp -a`, as it was then). Copied in
        // this process now, checked before the uninstall, and make's own
        // account of what it ran kept for the message.
        try FileManager.default.copyItem(at: staged, to: copy)
        let installed = files(in: copy)
        #expect(installed == files(in: staged) && installed.count > 10, "copied: \(installed)")
        let started = ContinuousClock.now
        let result = try await Subprocess.run(
            ["/usr/bin/make", "-C", TestInstallation.packageRoot.path, "uninstall", "DESTDIR=\(copy.path)"])
        let took = ContinuousClock.now - started
        #expect(result.status == 0, "\(result.error)")
        let left = files(in: copy)
        #expect(left == ["etc/reachd/reachd.conf"],
            "left behind: \(left); make (status \(result.status), \(took)) said: \(result.output) \(result.error)")
    }

    @Test func theInstalledBinaryIsSelfContainedAndStripped() async throws {
        let binary = TestInstallation.staged.appendingPathComponent("bin/reachd").path
        let dynamic = try await Subprocess.run(["/usr/bin/readelf", "-d", binary])
        let needed = dynamic.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libnl-route-3.so") }, "\(dynamic.output)")
        #expect(!needed.contains { $0.contains("libswift") || $0.contains("libFoundation") || $0.contains("libdispatch") },
                "Swift's runtime is linked in: \(needed)")
        #expect(!dynamic.output.contains("RUNPATH") && !dynamic.output.contains("RPATH"),
                "no run path into the toolchain or beside the binary: \(dynamic.output)")
        let sections = try await Subprocess.run(["/usr/bin/readelf", "-S", "-W", binary])
        #expect(!sections.output.contains(".symtab"), "stripped")
    }
}

@Suite(
    "reachd under a real systemd (systemd-nspawn)",
    .enabled(if: TestInstallation.available, TestInstallation.reason),
    .enabled(if: NamespaceSupport.available, NamespaceSupport.reason),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-nspawn"),
             "needs systemd-nspawn (Debian's systemd-container; make test installs it)"))
struct SystemdContainerTests {
    static let checks = [
        "socket-first", "activation", "active", "time-slice", "status-text", "route-change", "connectivity", "check-as-user", "dns-as-user", "journal-dns", "dead-gateway", "dead-gateway-back", "passive-as-user", "passive-watched", "passive-private", "spoofed-resume-as-user", "resume-as-unit", "flip-back",
        "journal-family", "journal-destination", "journal-connectivity", "journal-path", "journal-said-once", "monitor-handover-as-user", "journal-catalog",
        "watched-status", "other-user-client", "per-user-routing", "other-network-as-user", "per-user-limit", "metrics-listener", "metrics-path-changes",
        "metrics-rebinding", "journal-none-dropped", "textfile",
        "unprivileged",
        "descriptor-limit", "restart-after-kill", "seq-monotonic", "watchdog", "clean-stop", "textfile-removed",
        "wait-online", "wait-online-interface", "private-network-status", "private-network-wait-online",
    ]

    /// The tmpfiles.d line the README gives for node_exporter's textfile
    /// collector: the test boots with it, so the README says what works.
    static func readmesTmpfilesLine() throws -> String {
        let readme = try String(contentsOf: TestInstallation.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let line = readme.split(separator: "\n").first { $0.hasPrefix("L+ /var/lib/prometheus/node-exporter/") }
        return try #require(line.map { "\($0)\n" }, "README.md gives no tmpfiles.d line for the textfile")
    }

    @Test func notifyWatchdogSocketActivationAndHardeningUnderSystemd() async throws {
        let network = try await TestNetwork()
        try await network.inHost("link set vh up", "addr add 10.77.0.2/24 dev vh")
        // The hardened service must be able to run the connectivity check.
        let checkServer = try await CheckServer(in: network, answering: .init(status: 204))
        let scratch = network.directory
        let configuration = scratch.appendingPathComponent("reachd.conf")
        // Watched targets on-link and beyond the gateway, and the textfile
        // where the README's tmpfiles.d line expects it.
        try """
            [connectivity]
            url = \(checkServer.url)
            expect = status:204
            timeout = 2
            [watch]
            targets = 10.77.0.1:80 203.0.113.5:443
            [metrics]
            listen = yes
            textfile = /run/reachd/metrics/reachd.prom
            """.write(to: configuration, atomically: true, encoding: .utf8)
        let tmpfiles = scratch.appendingPathComponent("reachd-metrics.conf")
        try Self.readmesTmpfilesLine().write(to: tmpfiles, atomically: true, encoding: .utf8)
        let output = scratch.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let script = TestInstallation.packageRoot.appendingPathComponent("Tests/reachdTests/Systemd/check.sh").path
        let holder = TestInstallation.packageRoot.appendingPathComponent("Tests/reachdTests/Harness/hold-connections.py").path
        let checkUnit = scratch.appendingPathComponent("check.service")
        try """
            [Unit]
            Description=reachd checks
            Requires=reachd.socket
            After=reachd.socket
            SuccessAction=poweroff-force
            FailureAction=poweroff-force

            [Service]
            Type=oneshot
            ExecStart=/bin/bash \(script)
            """.write(to: checkUnit, atomically: true, encoding: .utf8)
        // A short watchdog, so the stopped-loop check takes seconds, not the shipped 30.
        let dropIn = scratch.appendingPathComponent("watchdog.conf")
        try "[Service]\nWatchdogSec=2s\n".write(to: dropIn, atomically: true, encoding: .utf8)
        // A volatile container boots for the first time, and Debian's presets
        // enable everything then; the checks start what they need themselves.
        let preset = scratch.appendingPathComponent("reachd-test.preset")
        try "disable reachd.service\ndisable reachd-wait-online.service\n".write(to: preset, atomically: true, encoding: .utf8)

        // As Debian's libnss-systemd sets it up: dbus-daemon resolves the
        // unit's dynamic user through it, and refuses a uid it cannot resolve.
        let nsswitch = scratch.appendingPathComponent("nsswitch.conf")
        try "passwd: files systemd\ngroup: files systemd\nshadow: files\nhosts: files dns\n"
            .write(to: nsswitch, atomically: true, encoding: .utf8)

        var arguments = [
            "/usr/bin/systemd-nspawn", "-q", "-D", "/", "--volatile=yes", "-b", "--register=no", "--keep-unit",
            "--network-namespace-path=/run/netns/\(network.host)",
            // Only --private-network grants it; the checks change routes inside.
            "--capability=CAP_NET_ADMIN",
            // The staged install where it would really be. No toolchain: the binary carries Swift's runtime.
            "--bind-ro=\(TestInstallation.staged.path):/usr/local", "--bind-ro=\(script)", "--bind-ro=\(holder)",
            "--bind=\(output.path):/out",
            "--bind-ro=\(checkUnit.path):/etc/systemd/system/check.service",
            "--bind-ro=\(dropIn.path):/etc/systemd/system/reachd.service.d/watchdog.conf",
            "--bind-ro=\(preset.path):/etc/systemd/system-preset/00-reachd-test.preset",
            "--bind-ro=\(configuration.path):/etc/reachd/reachd.conf",
            "--bind-ro=\(tmpfiles.path):/etc/tmpfiles.d/reachd-metrics.conf",
            "--bind-ro=\(nsswitch.path):/etc/nsswitch.conf",
        ]
        for unit in TestInstallation.unitNames {
            arguments.append("--bind-ro=\(TestInstallation.units.appendingPathComponent(unit).path):/etc/systemd/system/\(unit)")
        }
        // The metrics port held from boot, as the README sets it up.
        arguments += ["systemd.firstboot=off", "systemd.wants=reachd.socket", "systemd.wants=reachd-metrics.socket",
                      "systemd.wants=check.service"]
        let container = try await Subprocess.run(arguments, timeout: .seconds(150))
        withExtendedLifetime(checkServer) {}

        let results = (try? String(contentsOf: output.appendingPathComponent("results"), encoding: .utf8)) ?? ""
        let journal = (try? String(contentsOf: output.appendingPathComponent("journal"), encoding: .utf8)) ?? ""
        let context = "container exit \(container.status)\n\(container.error.suffix(2000))\nresults:\n\(results)\njournal:\n\(journal.suffix(4000))"
        #expect(results.hasSuffix("done\n"), "the checks ran to the end: \(context)")
        for check in Self.checks {
            #expect(results.contains("PASS \(check)\n"), "\(check): \(context)")
        }
    }
}
