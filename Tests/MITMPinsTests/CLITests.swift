import Foundation
import Testing

@testable import MITMPins

/// The real `mitm-proxy` binary: argument parsing, output streams and exit statuses.
@Suite(.tags(.live), .skippedInFastTier) struct CLITests {
    @Test func pinsPrintsThePinAndExitsZero() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let result = try await CLIBinary.run(["pins", pki.path("p384.pem")])
        #expect(result.status == 0)
        #expect(result.stdoutText.contains("SPKI-SHA256-BASE64  \(try await pki.opensslPin("p384.pem"))"))
    }

    @Test func checkExitStatusesAreZeroOneTwo() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let directory = try TemporaryDirectory()
        let matching = try await SampleFiles.instantiate("nsc-match.xml", in: directory)
        let mismatching = try await SampleFiles.instantiate("nsc-mismatch.xml", in: directory)
        #expect(try await CLIBinary.run(["pins", "check", matching, "--cert", pki.path("chain.pem")]).status == 0)
        #expect(try await CLIBinary.run(["pins", "check", mismatching, "--cert", pki.path("chain.pem")]).status == 1)
        let bad = try await CLIBinary.run([
            "pins", "check", (SampleFiles.directory as NSString).appendingPathComponent("no-ats.plist"), "--cert",
            pki.path("chain.pem"),
        ])
        #expect(bad.status == 2)
        #expect(bad.stderrText.contains("no-ats.plist has no NSAppTransportSecurity dictionary"))
        #expect(bad.stdoutText.isEmpty)
    }

    @Test func unreadableCertificateIsExitTwo() async throws {
        let directory = try TemporaryDirectory()
        let result = try await CLIBinary.run(["pins", directory.file("missing.pem")])
        #expect(result.status == 2)
        #expect(
            result.stderrText
                == "error: cannot read certificate file \(directory.file("missing.pem")): no such file or directory\n")
    }

    /// Found by the ats-plist fuzz target (kept in its corpus): a binary plist whose header reads `bplist0` and one
    /// byte more than `0`, holding a set. Foundation read it and crashed bridging the set (SIGSEGV); it is refused.
    @Test func checkOfABinaryPlistThatCrashedFoundationIsExitTwo() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let path = URL(fileURLWithPath: SampleFiles.directory).appendingPathComponent("../../../fuzz/corpus/ats-plist")
            .appendingPathComponent("regression-set-behind-bplist0-header").standardized.path
        let result = try await CLIBinary.run(["pins", "check", path, "--cert", pki.path("chain.pem")])
        #expect(result.status == 2, "\(result.stderrText)")
        #expect(
            result.stderrText
                == "error: \(path) is not a usable property list: it is a binary property list of another "
                + "version than bplist00\n")
    }

    /// An endless file (or a huge one) is refused once more than any pin configuration is read, under a memory limit
    /// and a timeout that reading it whole would pass.
    @Test func checkOfAnEndlessFileIsExitTwo() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let binary = try #require(CLIBinary.path)
        let result = try await Subprocess.run(
            "prlimit",
            [
                "--data=\(512 << 20)", "--", binary,
                "pins", "check", "/dev/zero", "--cert", pki.path("chain.pem"),
            ],
            timeout: .seconds(20))
        #expect(result.status == 2, "\(result.stderrText)")
        #expect(
            result.stderrText.contains("cannot read pin configuration /dev/zero: it is larger than 8 MiB"),
            "\(result.stderrText)")
    }

    @Test func snippetFormatsAreAccepted() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let result = try await CLIBinary.run([
            "pins", pki.path("chain.pem"), "--format", "curl", "--only", "leaf", "--backup-pin", SampleFiles.backupPin,
        ])
        #expect(result.status == 0)
        #expect(
            result.stdoutText
                == "curl --pinnedpubkey 'sha256//\(try await pki.opensslPin("leaf.pem"));sha256//\(SampleFiles.backupPin)' 'https://leaf.test/'\n"
        )
    }

    @Test func helpListsTheCheckSubcommand() async throws {
        let result = try await CLIBinary.run(["pins", "--help"])
        #expect(result.status == 0)
        #expect(result.stdoutText.contains("check"))
        #expect(result.stdoutText.contains("show (default)"))
        let show = try await CLIBinary.run(["pins", "show", "--help"])
        #expect(show.stdoutText.contains("--raw-key"))
        #expect(show.stdoutText.contains("NOT a"))
    }
}
