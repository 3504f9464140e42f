import Foundation
import TestSupport
import Testing

@testable import MITMTLS

@Suite struct CertificateAuthorityTests {
    @Test func firstStartCreatesPrivateFilesAndLaterStartsReuseThem() throws {
        let directory = TemporaryDirectory.path("ca")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let created = try CertificateAuthority.loadOrCreate(directory: directory)
        #expect(created.wasCreated)
        #expect(try permissions(directory) == 0o700)
        #expect(try permissions(created.files.privateKey) == 0o600)
        #expect(FileManager.default.fileExists(atPath: created.files.certificateDER))
        #expect(created.certificate.isCA)
        #expect(created.certificate.subject.hasPrefix("CN=mitm-proxy CA "))
        let reloaded = try CertificateAuthority.loadOrCreate(directory: directory)
        #expect(!reloaded.wasCreated)
        #expect(reloaded.certificate.isSame(as: created.certificate))
    }

    @Test func aMissingKeyIsAnErrorNamingTheFileNotANewCA() throws {
        let directory = TemporaryDirectory.path("half")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let created = try CertificateAuthority.loadOrCreate(directory: directory)
        try FileManager.default.removeItem(atPath: created.files.privateKey)
        let error = #expect(throws: CertificateAuthorityError.self) {
            try CertificateAuthority.loadOrCreate(directory: directory)
        }
        #expect(error?.message.contains("ca-key.pem is missing") == true)
        #expect(!FileManager.default.fileExists(atPath: created.files.privateKey))
    }

    @Test func aKeyFromAnotherCAIsRejected() throws {
        let first = TemporaryDirectory.path("first")
        let second = TemporaryDirectory.path("second")
        defer {
            try? FileManager.default.removeItem(atPath: first)
            try? FileManager.default.removeItem(atPath: second)
        }
        let a = try CertificateAuthority.loadOrCreate(directory: first)
        let b = try CertificateAuthority.loadOrCreate(directory: second)
        try FileManager.default.removeItem(atPath: a.files.privateKey)
        try FileManager.default.copyItem(atPath: b.files.privateKey, toPath: a.files.privateKey)
        let error = #expect(throws: CertificateAuthorityError.self) {
            try CertificateAuthority.loadOrCreate(directory: first)
        }
        #expect(error?.message.contains("does not match") == true)
    }

    @Test func aDamagedCertificateIsAnErrorNamingTheFile() throws {
        let directory = TemporaryDirectory.path("damaged")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let created = try CertificateAuthority.loadOrCreate(directory: directory)
        try Data("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n".utf8)
            .write(to: URL(fileURLWithPath: created.files.certificatePEM))
        let error = #expect(throws: CertificateAuthorityError.self) {
            try CertificateAuthority.loadOrCreate(directory: directory)
        }
        #expect(error?.message.contains(created.files.certificatePEM) == true)
    }

    @Test func anUnreadableCertificateIsAnErrorNamingTheFile() throws {
        let directory = TemporaryDirectory.path("unreadable")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let created = try CertificateAuthority.loadOrCreate(directory: directory)
        try FileManager.default.removeItem(atPath: created.files.certificatePEM)
        try FileManager.default.createDirectory(
            atPath: created.files.certificatePEM, withIntermediateDirectories: false)
        let error = #expect(throws: CertificateAuthorityError.self) {
            try CertificateAuthority.loadOrCreate(directory: directory)
        }
        #expect(error?.message.contains("cannot read CA certificate \(created.files.certificatePEM)") == true)
    }

    @Test func regenerateReplacesTheCA() throws {
        let directory = TemporaryDirectory.path("regen")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let old = try CertificateAuthority.loadOrCreate(directory: directory)
        let new = try CertificateAuthority.regenerate(directory: directory)
        #expect(!new.certificate.isSame(as: old.certificate))
        #expect(try CertificateAuthority.loadOrCreate(directory: directory).certificate.isSame(as: new.certificate))
    }

    private func permissions(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }
}
