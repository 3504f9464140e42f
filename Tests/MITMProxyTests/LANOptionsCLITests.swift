import Foundation
import MITMCore
@_spi(CommandLine) import MITMProxy
import Testing

/// The LAN flags on the built binary: bad `--proxy-auth` values are errors that never echo the password, the banner names
/// the addresses, the port, who can connect and the user (never the password), a terminal gets the QR code, and a client
/// command runs through a locked proxy with the credentials in its proxy variables.
@Suite(.tags(.live), .skippedInFastTier) struct LANOptionsCLITests {
    private func run(_ arguments: [String]) async throws -> SubprocessResult {
        try await Subprocess.run(
            try BuiltBinary.path(), arguments + ["--ca-dir", TemporaryDirectory.path("unused-ca")],
            timeout: .seconds(90))
    }

    @Test func badCredentialsExitWith2WithoutRepeatingThem() async throws {
        let cases: [([String], String)] = [
            (["--proxy-auth", "justapassword"], "--proxy-auth: expected USER:PASSWORD"),
            (["--proxy-auth", "qa:"], "--proxy-auth: the password is empty"),
            (
                ["--proxy-auth", "@/nonexistent/creds"],
                "cannot read --proxy-auth file /nonexistent/creds: No such file or directory"
            ),
        ]
        for (arguments, message) in cases {
            let result = try await run(arguments)
            #expect(result.status == 2 && result.stderrText.contains(message), "\(arguments): \(result)")
            #expect(!result.stderrText.contains("justapassword"), "\(result)")
        }
    }

    @Test(.enabled(if: MachineAddresses.nonLoopback != nil, "this machine has no non-loopback address"))
    func theBannerNamesTheAddressThePortAndWhoCanConnect() async throws {
        let address = try #require(MachineAddresses.nonLoopback)
        let proxy = try await ProxyProcess.start(["--host", address, "--proxy-auth", "qa:banner-Secret-9"])
        #expect(await Poll.until { proxy.outputText.contains("Proxy authentication:") }, "\(proxy.outputText)")
        let output = proxy.outputText
        await proxy.stop()
        #expect(output.contains("server \(address)  port \(proxy.port)"), "\(output)")
        #expect(
            output.contains(
                "then open http://mitm.proxy/ on it to install the CA (or \(MachineAddresses.url(address, port: proxy.port))/ "
                    + "before the proxy is set)"), "\(output)")
        #expect(output.contains("Who can connect: this machine and devices on private networks"), "\(output)")
        #expect(output.contains("Proxy authentication: required (user qa)"), "\(output)")
        #expect(
            !output.contains("banner-Secret-9") && !output.contains("QR code"),
            "no password, and no QR code off a terminal: \(output)")
    }

    @Test(
        .enabled(
            if: MachineAddresses.nonLoopback != nil && QRCodeLibrary.load() != nil,
            "no non-loopback address or no libqrencode"))
    func aTerminalGetsTheQRCodeOfTheOnboardingURL() async throws {
        let address = try #require(MachineAddresses.nonLoopback)
        let caDirectory = TemporaryDirectory.path("qr-ca")
        defer { try? FileManager.default.removeItem(atPath: caDirectory) }
        let terminal = try PseudoTerminal()
        let process = try ChildProcess(
            path: try BuiltBinary.path(),
            arguments: ["--host", address, "--port", "0", "--ca-dir", caDirectory],
            terminal: terminal.follower)
        defer {
            process.terminate()
            if !process.waitForExit(timeout: .seconds(10)) { process.kill() }
        }
        let seen = try await terminal.read(
            until: "Scan it with the phone's camera to open http://", timeout: .seconds(90))
        let host = address.contains(":") ? "[\(address)]" : address
        #expect(seen.contains("Scan it with the phone's camera to open http://\(host):"), "\(seen)")
        let codeLines = seen.split(whereSeparator: \.isNewline).filter { $0.contains("\u{1B}[30;107m") }
        #expect(codeLines.count >= 12 && codeLines.contains { $0.contains("\u{2588}") }, "\(seen)")
    }

    @Test func aClientCommandRunsThroughALockedProxy() async throws {
        let origin = try await OriginServer.start()
        let pki = try await TestPKI.shared()
        let result = try await Subprocess.run(
            try BuiltBinary.path(),
            [
                "--ca-dir", TemporaryDirectory.path("cmd-ca"), "--upstream-ca", pki.root, "--proxy-auth",
                "qa:cmd-Secret",
                "--expect", "intercepted:127.0.0.1", "--", "curl", "-sS", "--max-time", "10", origin.url("/hello"),
            ], timeout: .seconds(40))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText.contains("hello from origin"), "\(result)")
        await origin.stop()
    }
}
