import Foundation
import MITMCore
import MITMRules
import Testing

@testable import MITMProxy

/// A map-local directory (or a rule's body file) with symbolic links in it, asked for by real curl through the proxy:
/// a link that stays inside the directory is served, a link to a file or a directory outside it is refused (403, the
/// reason named) and the outside file's bytes never reach the client.
@Suite(.tags(.live), .skippedInFastTier) struct MapLocalSymlinkTests {
    private static let secret = "outside secret 7f3a"

    /// `DIR` with `inside.txt`, `link-in` -> `inside.txt`, `passwd-link` -> a file outside, `sub-link` -> a directory
    /// outside holding that file; `OUTSIDE` is that directory.
    private struct Layout {
        let root: String
        let directory: String
        let outside: String

        init() throws {
            root = try TemporaryDirectory.make("map-local-links")
            directory = root + "/mocks"
            outside = root + "/private"
            let files = FileManager.default
            try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try files.createDirectory(atPath: outside, withIntermediateDirectories: true)
            try "inside".write(toFile: directory + "/inside.txt", atomically: true, encoding: .utf8)
            try MapLocalSymlinkTests.secret.write(toFile: outside + "/secret.txt", atomically: true, encoding: .utf8)
            try files.createSymbolicLink(atPath: directory + "/link-in", withDestinationPath: "inside.txt")
            try files.createSymbolicLink(
                atPath: directory + "/passwd-link", withDestinationPath: outside + "/secret.txt")
            try files.createSymbolicLink(atPath: directory + "/sub-link", withDestinationPath: "../private")
        }
    }

    private func proxy(_ rules: [TrafficRule]) async throws -> ProxyHarness {
        try await ProxyHarness.start { configuration in
            configuration.resolveOverrides = ["api.origin.test": "127.0.0.1"]
            configuration.rules = rules
        }
    }

    @Test func aMappedDirectoryServesLinksInsideItAndRefusesLinksOutOfIt() async throws {
        let layout = try Layout()
        defer { try? FileManager.default.removeItem(atPath: layout.root) }
        let refusing = try RefusingPort()
        let harness = try await proxy([
            try RuleFlags.mapLocal("api.origin.test=\(layout.directory)", baseDirectory: "/")
        ])
        defer { harness.stop() }
        let base = "https://api.origin.test:\(refusing.port)"
        let get = { (path: String) in try await Curl.run(through: harness, [base + path, "-w", " %{http_code}"]) }

        #expect(try await get("/link-in").stdoutText == "inside 200")
        for path in ["/passwd-link", "/sub-link/secret.txt", "/sub-link/"] {
            let result = try await get(path)
            #expect(result.stdoutText.hasSuffix(" 403"), "\(path): \(result)")
            #expect(result.stdoutText.contains("outside \(layout.directory)"), "\(path): \(result)")
            #expect(!result.stdoutText.contains(Self.secret), "\(path): \(result)")
        }
    }

    @Test func aMappedFileOrBodyFileThatLinksOutOfItsDirectoryIsRefused() async throws {
        let layout = try Layout()
        defer { try? FileManager.default.removeItem(atPath: layout.root) }
        let origin = try await OriginServer.start()
        let link = layout.directory + "/passwd-link"
        var replaced = RuleActions()
        replaced.bodyFile = link
        var answered = RuleActions()
        answered.respond = FixedResponse(status: 200, bodyFile: link)
        let harness = try await proxy([
            try RuleFlags.mapLocal("api.origin.test/mapped=\(link)", baseDirectory: "/"),
            TrafficRule(name: "replaced", pattern: try URLPattern(parsing: "api.origin.test/hello"), actions: replaced),
            TrafficRule(
                name: "answered", pattern: try URLPattern(parsing: "api.origin.test/answered"), actions: answered),
            try RuleFlags.mapLocal("api.origin.test/inside=\(layout.directory)/link-in", baseDirectory: "/"),
        ])
        defer { harness.stop() }
        let get = { (path: String) in
            try await Curl.run(
                through: harness, [origin.url(path, hostname: "api.origin.test"), "-w", " %{http_code}"])
        }

        let mapped = try await get("/mapped")
        #expect(mapped.stdoutText.hasSuffix(" 403") && !mapped.stdoutText.contains(Self.secret), "\(mapped)")
        let body = try await get("/hello")
        #expect(body.stdoutText == "hello from origin 200", "\(body)")
        let answer = try await get("/answered")
        #expect(answer.stdoutText.hasSuffix(" 500") && !answer.stdoutText.contains(Self.secret), "\(answer)")
        #expect(answer.stdoutText.contains("outside \(layout.directory)"), "\(answer)")
        #expect(try await get("/inside").stdoutText == "inside 200")
        await origin.stop()
    }

    @Test(arguments: [false, true])
    func theOpenerRefusesEveryWayOutWithOrWithoutOpenat2(componentWise: Bool) throws {
        let layout = try Layout()
        defer { try? FileManager.default.removeItem(atPath: layout.root) }
        let open = { (name: String) in
            ConfinedFile.open(layout.directory + "/" + name, beneath: layout.directory, componentWise: componentWise)
        }
        for name in ["passwd-link", "sub-link/secret.txt", "sub-link/missing.txt"] {
            guard case .failure(.outside) = open(name) else {
                Issue.record("\(name) was not refused as outside")
                continue
            }
        }
        guard case .failure(.missing) = open("nothing-here.txt") else {
            Issue.record("a missing file is not .missing")
            return
        }
        guard case .success(let descriptor) = open("inside.txt") else {
            Issue.record("inside.txt did not open")
            return
        }
        close(descriptor)
        // openat2 follows a link that stays inside; the component-wise fallback follows none.
        switch open("link-in") {
        case .success(let descriptor):
            #expect(!componentWise)
            close(descriptor)
        case .failure(let refusal): #expect(componentWise, "\(refusal)")
        }
    }

    /// A client asks for `sub/file.txt` again and again while another thread keeps swapping `sub` between a real
    /// directory and a link to the outside one: no request is ever answered from the outside directory.
    @Test func aLinkSwappedInWhileTheFileIsOpenedNeverLeadsOut() async throws {
        let layout = try Layout()
        defer { try? FileManager.default.removeItem(atPath: layout.root) }
        let sub = layout.directory + "/sub"
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        try "inside file".write(toFile: sub + "/file.txt", atomically: true, encoding: .utf8)
        try Self.secret.write(toFile: layout.outside + "/file.txt", atomically: true, encoding: .utf8)
        let refusing = try RefusingPort()
        let harness = try await proxy([
            try RuleFlags.mapLocal("api.origin.test=\(layout.directory)", baseDirectory: "/")
        ])
        defer { harness.stop() }
        let swapping = SwapFlag()
        let swapper = Task {
            try await DedicatedThread.run { [outside = layout.outside] in
                var swaps = 0
                while swapping.isOn {
                    rename(sub, sub + ".real")
                    symlink(outside, sub)
                    unlink(sub)
                    rename(sub + ".real", sub)
                    swaps += 1
                }
                return swaps
            }
        }
        let url = "https://api.origin.test:\(refusing.port)/sub/file.txt"
        let result = try await Curl.run(
            through: harness, Array(repeating: url, count: 600) + ["-w", " %{http_code}\n"],
            timeout: .seconds(120))
        swapping.turnOff()
        let swaps = try await swapper.value
        #expect(swaps > 0)
        // Each answer is the inside file, or a refusal while `sub` was a link or gone; never the outside one.
        let answers = result.stdoutText.components(separatedBy: "\n").filter {
            ["inside file 200", " 403", " 404"].contains($0)
        }
        #expect(answers.count == 600, "\(result.stdoutText.prefix(400))")
        #expect(!result.stdoutText.contains(Self.secret), "a swapped-in link led out of the directory")
    }
}

/// Tells a swapping thread when to stop.
private final class SwapFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var on = true
    var isOn: Bool { lock.withLock { on } }
    func turnOff() { lock.withLock { on = false } }
}
