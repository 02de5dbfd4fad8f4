import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif
import Reachability
@testable import reachd

@Suite("The configuration file")
struct ConfigurationFileTests {
    static let shipped = TestInstallation.packageRoot.appendingPathComponent("systemd/reachd.conf").path

    @Test func theShippedFileParsesIntoAWorkingCheck() throws {
        let file = try #require(try ConfigurationFile.load(Self.shipped, named: true))
        #expect(try file.bool("connectivity", "enabled") == true)
        let command = try DaemonCommand.parse(["--config", Self.shipped])
        let check = try #require(try command.settings().check)
        #expect(check.host == "nmcheck.gnome.org" && check.port == 80 && check.path == "/check_network_status.txt")
        #expect(check.expectation == .header(name: "X-NetworkManager-Status", value: "online"))
        #expect(check.timeout == .seconds(5) && check.interval == .seconds(300))
    }

    @Test func everyKnownKeyIsDocumentedInTheShippedFile() throws {
        let lines = try String(contentsOfFile: Self.shipped, encoding: .utf8).split(separator: "\n").map(String.init)
        for (section, keys) in ConfigurationFile.known {
            #expect(lines.contains("[\(section)]"))
            for key in keys {
                let index = try #require(lines.firstIndex { $0 == "\(key) =" || $0.hasPrefix("\(key) = ") }, "\(key) is set in the shipped file")
                #expect(index > 0 && lines[index - 1].hasPrefix("#"), "\(key) has comment lines above it")
            }
        }
    }

    @Test func meteredNamesInterfaces() throws {
        let path = try Self.write("[metered]\nwwan0 = no\neth1 = yes\n")
        defer { unlink(path) }
        #expect(try DaemonCommand.parse(["--config", path]).settings().meteredOverrides == ["wwan0": false, "eth1": true])
        #expect(try DaemonSettings(DaemonCommand.parse([]).options, file: nil).meteredOverrides.isEmpty)
    }

    @Test func flagsWinAndNoCheckWinsOverEverything() throws {
        let flags = try DaemonCommand.parse(["--config", Self.shipped, "--check-url", "http://10.0.0.1:8080/generate_204",
                                             "--check-expect", "status:204", "--check-interval", "60"])
        let check = try #require(try flags.settings().check)
        #expect(check.host == "10.0.0.1" && check.expectation == .status(204) && check.interval == .seconds(60))
        #expect(check.timeout == .seconds(5), "what no flag says still comes from the file")
        #expect(try DaemonCommand.parse(["--config", Self.shipped, "--no-check"]).settings().check == nil)
    }

    /// `--no-check` is the way out of a `[connectivity]` section that stops
    /// the daemon (one written for an older reachd, say): it is not read.
    @Test func noCheckLeavesABrokenConnectivitySectionUnread() throws {
        let broken = try Self.write("[connectivity]\nurl = http://fd00::1/\ntimeout = 1e300\n[metered]\neth1 = yes\n")
        defer { unlink(broken) }
        #expect(throws: (any Error).self) { try DaemonCommand.parse(["--config", broken]).settings() }
        let settings = try DaemonCommand.parse(["--config", broken, "--no-check"]).settings()
        #expect(settings.check == nil && settings.meteredOverrides == ["eth1": true], "the rest is read as ever")
    }

    @Test func noFileMeansNoCheckAndDisabledMeansNoCheck() throws {
        #expect(try DaemonSettings(DaemonCommand.parse([]).options, file: nil).check == nil)
        let disabled = try Self.write("[connectivity]\nenabled = no\nurl = http://example.com/\n")
        defer { unlink(disabled) }
        #expect(try DaemonCommand.parse(["--config", disabled]).settings().check == nil)
    }

    /// The daemon takes URLs wherever `reach` does: a URL names its server.
    @Test func watchedTargetsMayBeURLs() throws {
        #expect(try DaemonCommand.parse(["--watch", "http://x.test/"]).settings().watchedTargets
            == [try Destination(host: "x.test", port: 80)])
        let file = try Self.write("[watch]\ntargets = https://wiki.corp.example/api http://[fd00::1]:8080/\n")
        defer { unlink(file) }
        #expect(try DaemonCommand.parse(["--config", file]).settings().watchedTargets
            == [try Destination(host: "wiki.corp.example", port: 443), try Destination(host: "fd00::1", port: 8080)])
    }

    /// The passive evidence is on by default, its threshold the file's.
    @Test func thePassiveWatchIsOnUnlessTurnedOff() throws {
        #expect(try DaemonSettings(DaemonCommand.parse([]).options, file: nil).passive == ConnectionEvidence.Threshold())
        let off = try Self.write("[connectivity]\npassive = no\n")
        defer { unlink(off) }
        #expect(try DaemonCommand.parse(["--config", off]).settings().passive == nil)
        let tuned = try Self.write("[connectivity]\npassive_failures = 5\npassive_peers = 3\npassive_window = 10\n")
        defer { unlink(tuned) }
        #expect(try DaemonCommand.parse(["--config", tuned]).settings().passive
            == ConnectionEvidence.Threshold(failures: 5, peers: 3, window: .seconds(10)))
    }

    @Test(arguments: [
        ("[connectivity]\nintervall = 60\n", ":2: unknown key intervall in [connectivity]; known: enabled, expect, interval, passive, passive_failures, passive_peers, passive_window, timeout, url"),
        ("[connectvity]\n", ":1: unknown section [connectvity]; known: [connectivity], [metered], [metrics], [watch]"),
        ("[metered]\nwwan0 = sometimes\n", ":2: wwan0 = sometimes is not yes or no"),
        ("url = http://x/\n", ":1: url is outside any section; put it under [connectivity]"),
        ("[connectivity]\nenabled = maybe\n", ":2: enabled = maybe is not yes or no"),
        ("[connectivity]\ntimeout = -1\n", ":2: timeout = -1 is not a number of seconds from 0.1 to 600"),
        // Each of these trapped at start-up (exit 132) converting to milliseconds.
        ("[connectivity]\ntimeout = 1e300\n", ":2: timeout = 1e300 is not a number of seconds from 0.1 to 600"),
        ("[connectivity]\ninterval = 1e300\n", ":2: interval = 1e300 is not a number of seconds from 1 to 604800"),
        ("[connectivity]\ninterval = nan\n", ":2: interval = nan is not a number of seconds from 1 to 604800"),
        ("[connectivity]\ninterval = 0.001\n", ":2: interval = 0.001 is not a number of seconds from 1 to 604800"),
        ("[connectivity]\njust words\n", ":2: \"just words\" is neither [section] nor key = value"),
        ("[connectivity]\nenabled = yes\n", ":2: enabled = yes needs url = http://HOST[:PORT]/PATH"),
        ("[connectivity]\n\nurl = https://example.com/\n", ":3: check URL \"https://example.com/\" is not plain HTTP"),
        ("[connectivity]\nurl = http://example.com/\nexpect = 204\n", ":3: check expectation \"204\" is not status:CODE"),
        ("[connectivity]\nurl = http://fd00::1/\n", ":2: check URL \"http://fd00::1/\" has the IPv6 address fd00::1 without brackets"),
        ("[connectivity]\ntimeout = 5\n\ntimeout = 10\n", ":4: timeout is set twice in [connectivity], on lines 2 and 4; keep one"),
        ("[metered]\nwwan0 = yes\n[metered]\nwwan0 = no\n", ":4: wwan0 is set twice in [metered], on lines 2 and 4; keep one"),
        ("[connectivity]\npassive = sometimes\n", ":2: passive = sometimes is not yes or no"),
        ("[connectivity]\npassive_failures = 0\n", ":2: passive_failures = 0 is not a whole number from 1 to 1000"),
        ("[connectivity]\npassive_failures = 2\npassive_peers = 3\n", ":3: passive_peers = 3 is more than passive_failures = 2"),
        ("[connectivity]\npassive_window = 1e300\n", ":2: passive_window = 1e300 is not a number of seconds from 0.1 to 600"),
        ("[metrics]\nlisten = localhost:9100\n", ":2: listen: localhost is not an IP address"),
        ("[metrics]\nlisten = 70000\n", ":2: listen: 70000 is not a port from 1 to 65535"),
        ("[metrics]\nlisten = ::1\n", ":2: listen: \"::1\" is not ADDRESS[:PORT]"),
        ("[metrics]\n\ntextfile = reachd.prom\n", ":3: textfile: reachd.prom is not an absolute path ending in .prom"),
        ("[metrics]\ntextfile = /var/lib/prometheus/node-exporter/reachd.txt\n", ":2: textfile: /var/lib/prometheus/node-exporter/reachd.txt is not an absolute path"),
        ("[watch]\ntargets = db.internal:5432 api.example.com:99999\n", ":2: targets: port \"99999\" is not a number from 1 to 65535"),
        ("[watch]\ntargets = a:1 b:1 c:1 d:1 e:1 f:1 g:1 h:1 i:1 j:1 k:1 l:1 m:1 n:1 o:1 p:1 q:1 r:1 s:1 t:1 u:1 v:1 w:1 x:1 y:1 z:1 aa:1 ab:1 ac:1 ad:1 ae:1 af:1 ag:1\n",
         ":2: targets: 33 targets, more than the 32 allowed"),
    ])
    func mistakesNameTheFileTheLineAndWhatIsKnown(text: String, says: String) throws {
        let path = try Self.write(text)
        defer { unlink(path) }
        #expect {
            // As the daemon reads it: the file once, every value checked.
            _ = try DaemonCommand.parse(["--config", path]).settings()
        } throws: { error in
            "\(error)".hasPrefix(path + says)
        }
    }

    /// A file as a Windows editor saves it, or an old Mac's: every line
    /// read, not one long comment (Swift's "\r\n" is one `Character`).
    @Test(arguments: ["\r\n", "\r", "\n"], [false, true])
    func everyLineEndingAndAByteOrderMarkAreRead(ending: String, byteOrderMark: Bool) throws {
        // The shipped file with its metrics listener set, ninety lines and
        // many comments in: a file read as one long comment never gets there.
        // (Set in place: a second `listen` is an error of its own.)
        let shipped = try String(contentsOfFile: Self.shipped, encoding: .utf8)
            .replacingOccurrences(of: "\nlisten = no\n", with: "\nlisten = 127.0.0.1:10079\n")
        let text = (byteOrderMark ? "\u{FEFF}" : "") + shipped.replacingOccurrences(of: "\n", with: ending)
        let shippedCopy = try Self.write(text)
        defer { unlink(shippedCopy) }
        let settings = try DaemonCommand.parse(["--config", shippedCopy]).settings()
        #expect(settings.check?.host == "nmcheck.gnome.org", "the shipped file's check, read through \(ending.debugDescription)")
        #expect(settings.metrics.listen?.description == "127.0.0.1:10079")
        // The line numbers count lines as the editor shows them.
        let mistake = try Self.write((byteOrderMark ? "\u{FEFF}" : "") + ["# x", "[connectivity]", "intervall = 1"].joined(separator: ending))
        defer { unlink(mistake) }
        #expect { try DaemonCommand.parse(["--config", mistake]).settings() } throws: { "\($0)".hasPrefix(mistake + ":3: unknown key intervall") }
    }

    /// Only the default file may be absent: a path the user named that is
    /// missing, a directory, a FIFO (which would hold start-up for ever) or
    /// a device is an error naming it, and so is a file over 64 KiB.
    @Test func aNamedPathMustBeAFileOfReasonableSize() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-\(UUID().uuidString).conf").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let huge = try Self.write(String(repeating: "# a comment of some length, repeated\n", count: 2000))
        defer { unlink(huge) }
        let cases = [
            ("/nonexistent/reachd.cnf", "no configuration file /nonexistent/reachd.cnf; check the --config path"),
            ("/etc", "/etc is a directory, not a configuration file; name a file with --config"),
            (fifo, "\(fifo) is a FIFO, not a configuration file"),
            ("/dev/zero", "/dev/zero is a character device, not a configuration file"),
            (huge, "\(huge) holds 74000 bytes or more, over the 64 KiB a configuration file may be"),
        ]
        for (path, says) in cases {
            #expect { try DaemonCommand.parse(["--config", path]).settings() } throws: { "\($0)".hasPrefix(says) }
        }
        #expect(try ConfigurationFile.load("/nonexistent/reachd.conf", named: false) == nil, "the default path may be absent")
        #expect(try ConfigurationFile.load("/dev/null", named: true) == nil, "the way to say no file, as for ssh -F")
    }

    /// A file of `text` in the temporary directory; the caller unlinks it.
    static func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-\(UUID().uuidString).conf").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
