import ArgumentParser
import Foundation
import MITMTLS

/// `mitm-proxy ca`: where the CA is, export it, regenerate it.
struct CACommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Show, export or regenerate the proxy's CA certificate.",
        subcommands: [Path.self, Export.self, Regenerate.self]
    )

    /// Loads the CA, creating it on first use, with errors as exit code 2.
    static func load(_ option: CADirectoryOption) throws -> CertificateAuthority {
        do {
            return try CertificateAuthority.loadOrCreate(directory: option.caDirectory)
        } catch {
            FileHandle.standardError.write(Data("mitm-proxy: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
    }

    struct Path: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the CA directory and its files.")
        @OptionGroup var ca: CADirectoryOption

        func run() throws {
            let authority = try CACommand.load(ca)
            print(
                """
                directory:        \(authority.files.directory)
                certificate PEM:  \(authority.files.certificatePEM)
                certificate DER:  \(authority.files.certificateDER)
                private key:      \(authority.files.privateKey)
                subject:          \(authority.certificate.subject)
                SHA-256:          \(authority.certificate.fingerprintSHA256)
                valid until:      \(authority.certificate.notAfter)
                """)
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the CA certificate as PEM, DER (.cer, Android and iOS) or an Apple-importable .p12.")

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case pem, der, p12
        }

        @OptionGroup var ca: CADirectoryOption
        @Option(help: "pem, der or p12 (the .p12 holds the CA private key too: keep it private).")
        var format: Format = .pem
        @Option(
            name: .shortAndLong, help: ArgumentHelp("File to write; stdout when omitted (pem only).", valueName: "file")
        )
        var output: String?
        @Option(help: "Password protecting the .p12 (required for p12: iOS refuses empty passwords).")
        var password: String?

        func validate() throws {
            if format != .pem && output == nil {
                throw ValidationError("--format \(format.rawValue) is binary: give a file with --output")
            }
            if format == .p12 && (password ?? "").isEmpty {
                throw ValidationError("--format p12 needs --password (iOS and macOS refuse .p12 files without one)")
            }
        }

        func run() throws {
            let authority = try CACommand.load(ca)
            let bytes: [UInt8]
            switch format {
            case .pem: bytes = Array(authority.certificate.pem.utf8)
            case .der: bytes = authority.certificate.der
            case .p12: bytes = try authority.applePKCS12(password: password ?? "")
            }
            guard let output else {
                FileHandle.standardOutput.write(Data(bytes))
                return
            }
            let mode: Int16 = format == .p12 ? 0o600 : 0o644
            guard
                FileManager.default.createFile(
                    atPath: output, contents: Data(bytes), attributes: [.posixPermissions: mode])
            else {
                FileHandle.standardError.write(
                    Data("mitm-proxy: cannot write \(output): \(String(cString: strerror(errno)))\n".utf8))
                throw ExitCode(2)
            }
            print("wrote \(output) (\(format.rawValue))")
        }
    }

    struct Regenerate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the CA with a new one. Every device must then install the new certificate.")
        @OptionGroup var ca: CADirectoryOption
        @Flag(help: "Confirm replacing an existing CA, even while a running proxy uses it.")
        var force = false

        func run() throws {
            let files = CertificateAuthorityFiles(directory: ca.caDirectory)
            let inUse = CADirectoryLock.isHeldByAProxy(directory: ca.caDirectory)
            if inUse && !force {
                FileHandle.standardError.write(
                    Data(
                        """
                        mitm-proxy: a running mitm-proxy uses the CA in \(files.directory); it would keep serving the old CA while \
                        ca.pem names the new one, and clients trusting the new one would refuse it. Stop that proxy first \
                        (or re-run with --force and restart it).\n
                        """.utf8))
                throw ExitCode(2)
            }
            if FileManager.default.fileExists(atPath: files.certificatePEM) && !force {
                FileHandle.standardError.write(
                    Data(
                        "mitm-proxy: a CA exists in \(files.directory); devices that trust it will stop trusting the proxy. Re-run with --force to replace it.\n"
                            .utf8))
                throw ExitCode(2)
            }
            if inUse {
                FileHandle.standardError.write(
                    Data(
                        """
                        warning: a running mitm-proxy uses \(files.directory): it keeps serving the OLD CA until it is restarted, \
                        and clients that trust the new one will refuse it.\n
                        """.utf8))
            }
            do {
                let authority = try CertificateAuthority.regenerate(directory: ca.caDirectory)
                print("new CA \(authority.certificate.commonName ?? "") written to \(authority.files.certificatePEM)")
            } catch {
                FileHandle.standardError.write(Data("mitm-proxy: \(error.message)\n".utf8))
                throw ExitCode(2)
            }
        }
    }
}
