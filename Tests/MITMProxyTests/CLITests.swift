import Foundation
import Testing

/// The built `mitm-proxy` binary: usage errors exit 2 with a clear message, `--port 0` prints the bound
/// port, `ca path` and `ca export` work, and a damaged CA directory is an error naming the file.
@Suite(.tags(.live), .skippedInFastTier) struct CLITests {
    private func run(_ arguments: [String]) async throws -> SubprocessResult {
        try await Subprocess.run(try BuiltBinary.path(), arguments, timeout: .seconds(90))
    }

    /// A CA directory with a CA in it, made by the binary itself.
    private func makeCADirectory() async throws -> String {
        let directory = TemporaryDirectory.path("cli-ca")
        let created = try await run(["ca", "path", "--ca-dir", directory])
        #expect(created.succeeded, "\(created)")
        return directory
    }

    @Test(arguments: [
        (["--port", "70000"], "--port 70000 is not a port number"),
        (["--bogus"], "Unknown option '--bogus'"),
        (["--host", "example.com"], "--host example.com is not an IP address"),
        (["--resolve", "api.example.com"], "--resolve api.example.com: expected HOST:ADDRESS"),
        (["--resolve", "api.example.com:not-an-ip"], "not-an-ip is not an IP address"),
        (["--upstream-ca", "/nonexistent/ca.pem"], "--upstream-ca /nonexistent/ca.pem: no readable file there"),
        (["--quiet", "--verbose"], "--quiet and --verbose cannot be used together"),
        (["--idle-timeout", "0"], "--idle-timeout 0.0 must be between 0.1 and 604800 seconds"),
        (["--idle-timeout", "inf"], "--idle-timeout inf must be between 0.1 and 604800 seconds"),
        (["--handshake-timeout", "1e11"], "--handshake-timeout 100000000000.0 must be between 0.1 and 604800 seconds"),
        (["--silence-window", "nan"], "--silence-window nan must be between"),
        (["--loops", "0"], "--loops 0 must be between 1 and 256"),
        (["--loops", "many"], "The value 'many' is invalid for '--loops <count>'"),
        (
            ["--expect", "intercepted:api.bank.test:443"],
            "host pattern \"api.bank.test:443\" has a port; give the host alone"
        ),
        (
            ["--web-host", "0.0.0.0"],
            "--web-host 0.0.0.0 is the address of the web UI's own listener: give --web-port PORT too"
        ),
        (["--web-port", "0", "--web-host", "lan"], "--web-host lan is not an IP address"),
        (["--web-port", "99999"], "--web-port 99999 is not a port number"),
        (["--no-web", "--web-port", "0"], "--no-web switches the web UI off"),
        (["--web-token", "short"], "--web-token: use at least 8 characters"),
        (["ca", "export", "--format", "der"], "--format der is binary: give a file with --output"),
        (["ca", "export", "--format", "p12", "-o", "/tmp/x.p12"], "--format p12 needs --password"),
    ])
    func badFlagsExitWith2AndSayWhy(arguments: [String], message: String) async throws {
        let result = try await run(arguments + ["--ca-dir", TemporaryDirectory.path("unused-ca")])
        #expect(result.status == 2 && !result.terminatedBySignal, "\(result)")
        #expect(result.stderrText.contains(message), "\(result)")
    }

    @Test func loopsSetsHowManyLoopThreadsServeConnections() async throws {
        let proxy = try await ProxyProcess.start(["--loops", "3"])
        // Each loop's thread names itself once it runs, which may be just after the proxy says where it listens.
        let loopThreads = { () -> [String] in
            let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(proxy.pid)/task")) ?? []
            return threads.compactMap {
                try? String(contentsOfFile: "/proc/\(proxy.pid)/task/\($0)/comm", encoding: .utf8)
            }
            .filter { $0.hasPrefix("mitm-loop-") }.sorted()
        }
        #expect(await Poll.until { loopThreads().count >= 3 })
        #expect(loopThreads() == ["mitm-loop-0\n", "mitm-loop-1\n", "mitm-loop-2\n"], "\(loopThreads())")
        let page = try await Subprocess.run(
            "curl",
            ["-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)", "http://mitm.proxy/ca.pem"])
        await proxy.stop()
        #expect(page.stdoutText.hasPrefix("-----BEGIN CERTIFICATE-----"), "\(page)")
    }

    @Test func portZeroPrintsTheBoundPortAndStopsCleanlyOnSIGTERM() async throws {
        let proxy = try await ProxyProcess.start(["--upstream-insecure"])
        #expect(proxy.port > 0)
        let page = try await Subprocess.run(
            "curl",
            ["-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)", "http://mitm.proxy/ca.pem"])
        let caFile = proxy.caDirectory + "/ca.pem"
        #expect(page.stdoutText == (try String(contentsOfFile: caFile, encoding: .utf8)), "\(page)")
        let output = proxy.outputText
        #expect(output.contains("Created a new CA in \(proxy.caDirectory)"), "\(output)")
        #expect(output.contains("CA certificate: \(caFile)"), "\(output)")
        #expect(output.contains("upstream certificates are NOT verified"), "\(output)")
        proxy.process.terminate()
        // Reading the status of a running process traps in Foundation: check it only once the process has exited.
        guard await Poll.until(timeout: .seconds(30), { !proxy.process.isRunning }) else {
            Issue.record("still running 30 s after SIGTERM: \(proxy.outputText)")
            await proxy.stop()
            return
        }
        #expect(proxy.process.terminationStatus == 0, "\(proxy.outputText)")
        await proxy.stop()
    }

    @Test func caPathNamesTheFilesAndTheFingerprint() async throws {
        let directory = try await makeCADirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await run(["ca", "path", "--ca-dir", directory])
        #expect(result.succeeded, "\(result)")
        let fingerprint = try await Subprocess.run(
            "openssl", ["x509", "-in", directory + "/ca.pem", "-noout", "-fingerprint", "-sha256"])
        let hex =
            fingerprint.stdoutText.split(separator: "=").last.map {
                $0.replacingOccurrences(of: ":", with: "").lowercased()
            } ?? "?"
        #expect(result.stdoutText.contains("certificate PEM:  \(directory)/ca.pem"), "\(result)")
        #expect(
            result.stdoutText.contains("SHA-256:          \(hex.trimmingCharacters(in: .whitespacesAndNewlines))"),
            "\(result) vs \(fingerprint)")
        var info = stat()
        #expect(stat(directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(stat(directory + "/ca-key.pem", &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func caExportWritesDERAndAPasswordProtectedP12() async throws {
        let directory = try await makeCADirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let der = directory + "/export.cer"
        let p12 = directory + "/export.p12"
        #expect(try await run(["ca", "export", "--ca-dir", directory, "--format", "der", "-o", der]).succeeded)
        #expect(
            try await run(["ca", "export", "--ca-dir", directory, "--format", "p12", "-o", p12, "--password", "s3cret"])
                .succeeded)
        let pem = try await run(["ca", "export", "--ca-dir", directory])
        #expect(pem.stdoutText == (try String(contentsOfFile: directory + "/ca.pem", encoding: .utf8)))

        let fromDER = try await Subprocess.run(
            "openssl", ["x509", "-inform", "DER", "-in", der, "-noout", "-fingerprint", "-sha256"])
        let fromPEM = try await Subprocess.run(
            "openssl", ["x509", "-in", directory + "/ca.pem", "-noout", "-fingerprint", "-sha256"])
        #expect(fromDER.succeeded && fromDER.stdoutText == fromPEM.stdoutText, "\(fromDER) \(fromPEM)")

        for legacy in [["-legacy"], []] {
            let info = try await Subprocess.run(
                "openssl", ["pkcs12"] + legacy + ["-info", "-in", p12, "-passin", "pass:s3cret", "-nodes"])
            #expect(info.succeeded, "\(legacy): \(info)")
            #expect(
                info.stderrText.contains("pbeWithSHA1And3-KeyTripleDES-CBC") && info.stderrText.contains("MAC: sha1"),
                "\(info)")
            #expect(
                info.stdoutText.contains("BEGIN CERTIFICATE") && info.stdoutText.contains("BEGIN PRIVATE KEY"),
                "\(info)")
        }
        let wrong = try await Subprocess.run(
            "openssl", ["pkcs12", "-legacy", "-info", "-in", p12, "-passin", "pass:wrong", "-nokeys"])
        #expect(!wrong.succeeded)
        var info = stat()
        #expect(stat(p12, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func aHalfWrittenCADirectoryIsAnErrorNamingTheMissingFile() async throws {
        let directory = try await makeCADirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.removeItem(atPath: directory + "/ca-key.pem")
        for arguments in [["--port", "0"], ["ca", "path"]] {
            let result = try await run(arguments + ["--ca-dir", directory])
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderrText.contains("\(directory)/ca-key.pem is missing"), "\(result)")
        }
        #expect(
            !FileManager.default.fileExists(atPath: directory + "/ca-key.pem"),
            "the proxy must not silently make a new CA")
    }

    @Test func anUnreadableCACertificateIsAnErrorNamingTheFile() async throws {
        let directory = try await makeCADirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Tests may run as root, which reads any file whatever its mode: a directory in its place cannot be read.
        try FileManager.default.removeItem(atPath: directory + "/ca.pem")
        try FileManager.default.createDirectory(atPath: directory + "/ca.pem", withIntermediateDirectories: false)
        let unreadable = try await run(["--port", "0", "--ca-dir", directory])
        #expect(unreadable.status == 2, "\(unreadable)")
        #expect(unreadable.stderrText.contains("cannot read CA certificate \(directory)/ca.pem"), "\(unreadable)")

        try FileManager.default.removeItem(atPath: directory + "/ca.pem")
        try "-----BEGIN CERTIFICATE-----\nnot base64\n".write(
            toFile: directory + "/ca.pem", atomically: true, encoding: .utf8)
        let corrupt = try await run(["ca", "path", "--ca-dir", directory])
        #expect(corrupt.status == 2, "\(corrupt)")
        #expect(corrupt.stderrText.contains("\(directory)/ca.pem is not a readable PEM certificate"), "\(corrupt)")
    }

    // Issue 10, observation 11: file errors name the file, the operation and the reason, in words.
    @Test func fileErrorsAreInWords() async throws {
        let file = TemporaryDirectory.path("regular-file")
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let underFile = try await run(["--port", "0", "--ca-dir", file + "/ca"])
        #expect(underFile.status == 2, "\(underFile)")
        #expect(
            underFile.stderrText.contains("cannot create CA directory \(file)/ca: \(file) is a file, not a directory"),
            "\(underFile)")
        #expect(!underFile.stderrText.contains("NSCocoaErrorDomain"), "\(underFile)")

        let har = TemporaryDirectory.path("recording") + ".har"
        try #"{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": []}}"#.write(
            toFile: har, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: har) }
        let notAReport = try await run(["verify", "--report", har, "--expect", "refused:a.test"])
        #expect(notAReport.status == 2, "\(notAReport)")
        #expect(
            notAReport.stderrText.contains(
                "\(har) is not a mitm-proxy report: it has no \"result\" field (it looks like a HAR file"),
            "\(notAReport)")
        #expect(!notAReport.stderrText.contains("DecodingError"), "\(notAReport)")

        let missing = try await run(["verify", "--report", "/nonexistent/report.json"])
        #expect(missing.status == 2, "\(missing)")
        #expect(
            missing.stderrText.contains("cannot read report /nonexistent/report.json: No such file or directory"),
            "\(missing)")
        let directory = try await run(["har", "summary", FileManager.default.temporaryDirectory.path])
        #expect(
            directory.stderrText.contains(
                "cannot read HAR file \(FileManager.default.temporaryDirectory.path): it is a directory, not a file"),
            "\(directory)")
    }
}
