import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// An X server of its own (Xvfb) for a test's windows, and what a person
/// would read off its screen: a screenshot (ImageMagick's `import`) read by
/// OCR (tesseract).
///
/// The server, the app and the tools that look and click all run in the
/// test network's host namespace, where X clients connect by the server's
/// abstract socket, which is that namespace's alone; the socket's path in
/// /tmp/.X11-unix is every namespace's, and any X server on the same
/// display number replaces it. With the server in the root namespace, an
/// app in the test's once found no display in CI while `import` from the
/// root namespace still read the server (the cause was not reproduced).
/// -noreset: the server does not reset as its last client leaves (a
/// screenshot just before the app connects), a reset that would close
/// clients connecting meanwhile.
final class VirtualDisplay: @unchecked Sendable {
    static let tools = ["/usr/bin/Xvfb", "/usr/bin/import", "/usr/bin/convert", "/usr/bin/tesseract", "/usr/bin/xdotool"]
    static var available: Bool { tools.allSatisfy(FileManager.default.isExecutableFile(atPath:)) }
    static let reason: Comment = "needs xvfb, imagemagick, tesseract-ocr and xdotool (make test installs them)"

    /// `:N`, for DISPLAY.
    let name: String
    let width: Int
    let height: Int
    private let server: Subprocess
    private let directory: URL
    /// Runs an X client where the server and the app are.
    private let inNamespace: [String]
    /// The app on this display, whose own words a failed reading reports:
    /// an empty screen says nothing of why.
    var app: Subprocess?

    init(in network: TestNetwork, width: Int = 480, height: Int = 560) async throws {
        self.width = width
        self.height = height
        inNamespace = ["/usr/bin/ip", "netns", "exec", network.host]
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-display-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // -displayfd: Xvfb takes a free display number itself and prints it once it listens.
        let server = try Subprocess(inNamespace + [
            "/usr/bin/Xvfb", "-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-noreset",
        ])
        self.server = server
        let number = try await eventually("Xvfb listening") { () -> Int? in
            guard server.isRunning else { throw HarnessError.commandFailed("Xvfb exited: \(server.errorOutput)") }
            return server.outputLines.first.flatMap { Int($0) }
        }
        name = ":\(number)"
    }

    deinit {
        server.signal(SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The environment a GTK program needs to show its window here: X11
    /// (there is no Wayland), drawn by cairo (no GPU), and no accessibility
    /// bus to look for.
    var environment: [String] {
        ["DISPLAY=\(name)", "GDK_BACKEND=x11", "GSK_RENDERER=cairo", "NO_AT_BRIDGE=1"]
    }

    /// The whole screen, as a PNG at `path`.
    func screenshot(to path: URL) async throws {
        let shot = try await Subprocess.run(inNamespace + ["/usr/bin/import", "-display", name, "-window", "root", path.path])
        guard shot.status == 0 else { throw HarnessError.commandFailed("import: \(shot.error)") }
    }

    /// One word tesseract found, where it is on the screen.
    struct Word {
        var text: String
        var x: Int
        var y: Int
        var width: Int
        var height: Int
    }

    /// tesseract on one thread, as its documentation advises where several
    /// run at once: its OpenMP threads cost more than they gain on two cores
    /// shared with every other suite. One screen read in 0.30 s of wall
    /// time and 0.24 s of CPU on one thread, in 0.46 s and 0.36 s with them
    /// (idle machine, docs/images/content.png).
    static let tesseract = ["/usr/bin/env", "OMP_THREAD_LIMIT=1", "/usr/bin/tesseract"]

    /// Every word on the screen now, as tesseract reads it: sparse text (a
    /// window's widgets are not a page of prose), from the screenshot as it
    /// is and again in grey with light tints taken to white, in which it
    /// finds text on a tinted band (the banner) that it otherwise takes for
    /// a picture. Text on a saturated button it finds only in the first.
    func words() async throws -> [Word] {
        let shot = directory.appendingPathComponent("screen.png")
        let untinted = directory.appendingPathComponent("screen-untinted.png")
        try await screenshot(to: shot)
        let pixels = try Data(contentsOf: shot)
        if let lastRead, lastRead.shot == pixels { return lastRead.words }
        let grey = try await Subprocess.run(["/usr/bin/convert", shot.path, "-colorspace", "Gray", "-level", "0%,80%", untinted.path])
        guard grey.status == 0 else { throw HarnessError.commandFailed("convert: \(grey.error)") }
        var words = try await accentButtons(in: shot)
        for image in [shot, untinted] {
            let ocr = try await Subprocess.run(Self.tesseract + [image.path, "-", "--psm", "12", "tsv"])
            guard ocr.status == 0 else { throw HarnessError.commandFailed("tesseract: \(ocr.error)") }
            // level page block paragraph line word left top width height confidence text
            words += ocr.output.split(separator: "\n").dropFirst().compactMap { line in
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                guard fields.count == 12, let x = Int(fields[6]), let y = Int(fields[7]), let width = Int(fields[8]),
                    let height = Int(fields[9])
                else { return nil }
                let text = fields[11].trimmingCharacters(in: .whitespaces)
                return text.isEmpty ? nil : Word(text: text, x: x, y: y, width: width, height: height)
            }
        }
        lastRead = (pixels, words)
        return words
    }

    /// The last screen read, byte for byte, and what was read on it: a wait
    /// reads the screen over and over, mostly unchanged, and the same
    /// pixels read the same. `import` writes the same bytes for the same
    /// screen.
    private var lastRead: (shot: Data, words: [Word])?

    /// The buttons in the accent colour (a suggested action; Adwaita's
    /// blue), each as one word: the label tesseract reads on the button
    /// alone. On the whole screen it takes such a button for a picture.
    private func accentButtons(in shot: URL) async throws -> [Word] {
        let mask = directory.appendingPathComponent("accent.png")
        let made = try await Subprocess.run([
            "/usr/bin/convert", shot.path, "-fuzz", "12%", "-fill", "white", "-opaque", "#3584e4",
            "-fill", "black", "+opaque", "white", mask.path,
        ])
        guard made.status == 0 else { throw HarnessError.commandFailed("convert: \(made.error)") }
        let regions = try await Subprocess.run([
            "/usr/bin/convert", mask.path, "-define", "connected-components:verbose=true",
            "-define", "connected-components:area-threshold=1000", "-connected-components", "8", "null:",
        ])
        // "  781: 105x44+187+412 239.2,433.7 4215 srgb(255,255,255)": a white region, a button.
        var buttons: [Word] = []
        for line in regions.output.split(separator: "\n") where line.hasSuffix("srgb(255,255,255)") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2 else { continue }
            let box = fields[1].split(whereSeparator: { $0 == "x" || $0 == "+" }).compactMap { Int($0) }
            guard box.count == 4, box[0] < width / 2, box[1] < height / 4 else { continue }
            // The label alone: without the pill's round ends (read as "<"
            // and ">"), and three times the size (at 1x "In" reads "in").
            let (inset, crop) = (box[1] / 4, directory.appendingPathComponent("button.png"))
            _ = try await Subprocess.run([
                "/usr/bin/convert", shot.path, "-crop", "\(box[0] - 2 * inset)x\(box[1])+\(box[2] + inset)+\(box[3])", "+repage",
                "-resize", "300%", crop.path,
            ])
            let label = try await Subprocess.run(Self.tesseract + [crop.path, "-", "--psm", "7"])
            let text = label.output.trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters))
            if !text.isEmpty { buttons.append(Word(text: text, x: box[2], y: box[3], width: box[0], height: box[1])) }
        }
        return buttons
    }

    /// Copies the screenshot the last reading was made from to `path`: the
    /// picture of a state too short-lived to be taken again.
    func keepLastRead(to path: URL) throws {
        try? FileManager.default.removeItem(at: path)
        try FileManager.default.copyItem(at: directory.appendingPathComponent("screen.png"), to: path)
    }

    /// The screen's words, joined by spaces.
    func text() async throws -> String {
        try await words().map(\.text).joined(separator: " ")
    }

    /// Waits until the screen reads `phrase` (and none of `absent`); the
    /// text read last.
    @discardableResult
    func waitUntil(
        reads phrase: String, without absent: [String] = [], _ what: String, timeout: Duration = .seconds(30)
    ) async throws -> String {
        var last = ""
        do {
            return try await eventually(what, timeout: timeout) { () -> String? in
                last = try await text()
                return last.contains(phrase) && !absent.contains(where: last.contains) ? last : nil
            }
        } catch {
            let said = app.map { " (the app \($0.isRunning ? "runs" : "exited"), and said: \($0.errorOutput.suffix(1500)))" } ?? ""
            let serverSaid = server.errorOutput.isEmpty ? "" : "; Xvfb said: \(server.errorOutput.suffix(1500))"
            throw HarnessError.commandFailed("\(what): the screen read \"\(last)\"\(said)\(serverSaid)")
        }
    }

    /// Clicks the middle of the first word `text` on the screen (or the
    /// button labelled so), as a person would.
    func click(_ text: String) async throws {
        let word = try await eventually("\"\(text)\" on the screen") { try await words().first { $0.text == text } }
        let click = try await Subprocess.run(inNamespace + [
            "/usr/bin/env", "DISPLAY=\(name)", "/usr/bin/xdotool",
            "mousemove", "\(word.x + word.width / 2)", "\(word.y + word.height / 2)", "click", "1",
        ])
        guard click.status == 0 else { throw HarnessError.commandFailed("xdotool: \(click.error)") }
    }
}
