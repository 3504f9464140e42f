import Foundation
import Testing

@testable import MITMPins

@Suite(.tags(.live), .skippedInFastTier) struct BadInputTests {
    private func listing(_ path: String) -> PinsToolResult {
        var options = PinsListOptions()
        options.files = [path]
        return PinsTool.list(options)
    }

    @Test func missingFileIsNamed() throws {
        let directory = try TemporaryDirectory()
        let result = listing(directory.file("absent.pem"))
        #expect(result.exitStatus == 2)
        #expect(
            result.standardError.contains("cannot read certificate file \(directory.file("absent.pem")): no such file"))
    }

    @Test func directoryIsRefused() throws {
        let directory = try TemporaryDirectory()
        let result = listing(directory.path)
        #expect(result.exitStatus == 2)
        #expect(result.standardError.contains("is a directory"))
    }

    /// Root reads any file, so as root the file is read by the built binary running as `nobody` (`setpriv`); as
    /// anyone else, in process.
    @Test func unreadableFileIsNamed() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("locked.pem", "x")
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: path)
        if getuid() == 0 {
            let binary = try #require(CLIBinary.path)
            let result = try await Subprocess.run(
                "setpriv",
                [
                    "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                    binary, "pins", path,
                ])
            #expect(result.status == 2, "\(result)")
            #expect(result.stderrText == "error: cannot read certificate file \(path): permission denied\n")
        } else {
            let result = listing(path)
            #expect(result.exitStatus == 2)
            #expect(result.standardError.contains("cannot read certificate file \(path): permission denied"))
        }
    }

    @Test func emptyFileIsNamed() throws {
        let directory = try TemporaryDirectory()
        let result = listing(try directory.write("empty.pem", ""))
        #expect(result.exitStatus == 2)
        #expect(result.standardError.contains("empty.pem is empty"))
    }

    @Test func pemWithoutCertificateSaysWhatItHolds() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let result = listing(pki.path("leaf-key.pem"))
        #expect(result.exitStatus == 2)
        #expect(result.standardError.contains("leaf-key.pem has no certificate: it holds -----BEGIN PRIVATE KEY-----"))
    }

    @Test func truncatedDERIsNamed() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let directory = try TemporaryDirectory()
        let der = try Data(contentsOf: URL(fileURLWithPath: pki.path("leaf.der")))
        let path = try directory.write("cut.der", der.prefix(der.count - 20))
        let result = listing(path)
        #expect(result.exitStatus == 2)
        #expect(result.standardError.contains("cut.der is not a valid DER certificate"))
    }

    @Test func damagedPEMIsNamed() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let directory = try TemporaryDirectory()
        let pem = try String(contentsOfFile: pki.path("leaf.pem"), encoding: .utf8)
        let lines = pem.split(separator: "\n")
        let damaged = ([lines[0]] + lines[1...4] + [lines.last!]).joined(separator: "\n") + "\n"
        let result = listing(try directory.write("damaged.pem", damaged))
        #expect(result.exitStatus == 2)
        #expect(result.standardError.contains("damaged.pem holds a damaged PEM certificate"))
    }

    @Test func plainTextIsNotACertificate() throws {
        let directory = try TemporaryDirectory()
        let result = listing(try directory.write("notes.txt", "hello, this is not a certificate\n"))
        #expect(result.exitStatus == 2)
        #expect(result.standardError.contains("notes.txt is not a certificate"))
    }

    @Test func missingProxyCAExplainsWhereItLooked() throws {
        let directory = try TemporaryDirectory()
        var options = PinsListOptions()
        options.proxyCADirectory = directory.path
        let result = PinsTool.list(options)
        #expect(result.exitStatus == 2)
        #expect(result.standardError.contains("no proxy CA at \(directory.file("ca.pem"))"))
    }

    @Test func proxyCAIsRead() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let directory = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: pki.path("root.pem"), toPath: directory.file("ca.pem"))
        var options = PinsListOptions()
        options.proxyCADirectory = directory.path
        let result = PinsTool.list(options)
        #expect(result.exitStatus == 0)
        #expect(result.standardOutput.contains("proxy CA \(directory.file("ca.pem")): 1 certificate"))
        #expect(result.standardOutput.contains(try await pki.opensslPin("root.pem")))
        #expect(result.standardOutput.contains("[0] root"))
    }

    @Test func badHostArgumentsAreRejected() {
        #expect(throws: PinsError.self) { try HostAndPort(parsing: "host:0") }
        #expect(throws: PinsError.self) { try HostAndPort(parsing: "host:http") }
        #expect(throws: PinsError.self) { try HostAndPort(parsing: "[::1") }
        #expect(throws: PinsError.self) { try HostAndPort(parsing: ":443") }
    }

    @Test func hostArgumentsParse() throws {
        #expect(try HostAndPort(parsing: "example.com") == HostAndPort(host: "example.com", port: 443))
        #expect(try HostAndPort(parsing: "example.com:8443") == HostAndPort(host: "example.com", port: 8443))
        #expect(try HostAndPort(parsing: "[::1]:4433") == HostAndPort(host: "::1", port: 4433))
        #expect(try HostAndPort(parsing: "::1") == HostAndPort(host: "::1", port: 443))
        #expect(try HostAndPort(parsing: "[::1]:4433").description == "[::1]:4433")
    }

    /// Found by the network-security-config fuzz target: Foundation's XML parser trapped on a comment that is not UTF-8.
    @Test func aNetworkSecurityConfigThatIsNotUTF8IsAnErrorNotACrash() {
        let bytes =
            Array("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- caf".utf8) + [0xE9]
            + Array(" -->\n<network-security-config/>\n".utf8)
        #expect {
            try NetworkSecurityConfigReader.read(Data(bytes), path: "nsc.xml")
        } throws: { error in
            "\(error)".contains("nsc.xml is not valid UTF-8 (byte 47 is not)")
        }
    }

    /// Found by the network-security-config fuzz target: Foundation's XML parser read a NULL pointer for a processing
    /// instruction without data. Such instructions are dropped; the pins around them are still read.
    @Test func aProcessingInstructionWithoutDataIsIgnored() throws {
        let xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <?x?>
            <network-security-config>
                <domain-config>
                    <domain>pinned.test</domain>
                    <pin-set><pin digest="SHA-256">AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</pin><?y ?></pin-set>
                </domain-config>
            </network-security-config>
            """
        let configuration = try NetworkSecurityConfigReader.read(Data(xml.utf8), path: "nsc.xml")
        #expect(configuration.domains.map(\.name) == ["pinned.test"])
        #expect(configuration.domains.first?.pins.count == 1)
        // An XML declaration without its version is such an instruction too.
        let bare = try NetworkSecurityConfigReader.read(
            Data(xml.replacingOccurrences(of: "<?xml version=\"1.0\" encoding=\"utf-8\"?>", with: "<?xml?>").utf8),
            path: "nsc.xml")
        #expect(bare.domains.map(\.name) == ["pinned.test"])
    }

    /// Found by the ats-plist fuzz target: Foundation recursed until the stack overflowed on a binary plist whose
    /// dictionary holds itself.
    @Test func aBinaryPlistThatContainsItselfIsAnErrorNotACrash() {
        var bytes = Array("bplist00".utf8)
        bytes += [0xD1, 0x01, 0x00]  // object 0: a dictionary of one entry, key object 1, value object 0 (itself)
        bytes += [0x51, UInt8(ascii: "a")]  // object 1: the string "a"
        bytes += [8, 11]  // the offset table
        bytes +=
            [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 2] + [UInt8](repeating: 0, count: 8) + [
                0, 0, 0, 0, 0, 0, 0, 13,
            ]
        #expect {
            try ATSPlistReader.read(Data(bytes), path: "Info.plist")
        } throws: { error in
            "\(error)".contains("Info.plist is not a usable property list: a container contains itself")
        }
    }

    /// Beyond 256 elements the XML reader refuses; beyond 64 arrays and dictionaries the property list reader does.
    @Test(arguments: [(100, "nest more than 64 deep"), (5_000, "nest more than 256 deep")])
    func aPlistNestedDeeperThanAnInfoPlistEverIsRefused(depth: Int, words: String) {
        let xml =
            "<?xml version=\"1.0\"?><plist version=\"1.0\">" + String(repeating: "<array>", count: depth)
            + String(repeating: "</array>", count: depth) + "</plist>"
        #expect {
            try ATSPlistReader.read(Data(xml.utf8), path: "Info.plist")
        } throws: { error in
            "\(error)".contains(words)
        }
    }
}
