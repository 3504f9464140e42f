import Foundation

/// An unsigned Apple configuration profile (`.mobileconfig`) that installs one root CA certificate: a
/// `com.apple.security.root` payload holding exactly the certificate's DER. iOS, iPadOS and macOS install it from
/// Settings; full trust for TLS is still switched on by hand (iOS: Certificate Trust Settings).
package struct RootCertificateProfile: Sendable {
    /// The CA certificate, DER.
    package let certificateDER: [UInt8]
    /// The SHA-256 of `certificateDER`: the UUIDs and identifiers derive from it, so one CA always gives the same profile
    /// (installing it again replaces it) and another CA a different one.
    package let certificateSHA256: [UInt8]
    /// The name shown in Settings (the CA's common name).
    package let displayName: String

    /// A profile for the CA certificate `certificateDER`, whose SHA-256 is `certificateSHA256`.
    package init(certificateDER: [UInt8], certificateSHA256: [UInt8], displayName: String) {
        precondition(certificateSHA256.count == 32, "a SHA-256 digest has 32 bytes")
        self.certificateDER = certificateDER
        self.certificateSHA256 = certificateSHA256
        self.displayName = displayName
    }

    /// The `Content-Type` that makes Safari offer to install it.
    package static let contentType = "application/x-apple-aspen-config"

    /// The outer profile's UUID (from the digest's first half).
    package var profileUUID: String { Self.uuid(Array(certificateSHA256[0..<16])) }
    /// The certificate payload's UUID (from the digest's second half).
    package var payloadUUID: String { Self.uuid(Array(certificateSHA256[16..<32])) }

    private var identifier: String {
        "proxy.mitm.ca." + DigitText.hex(certificateSHA256.prefix(8))
    }

    /// The profile as an XML property list.
    package var xml: String {
        let name = XMLText.escaped(displayName)
        let base64 = Data(certificateDER).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            .split(separator: "\n").map { "\t\t\t\($0)" }.joined(separator: "\n")
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>PayloadContent</key>
            \t<array>
            \t\t<dict>
            \t\t\t<key>PayloadCertificateFileName</key>
            \t\t\t<string>mitm-proxy-ca.cer</string>
            \t\t\t<key>PayloadContent</key>
            \t\t\t<data>
            \(base64)
            \t\t\t</data>
            \t\t\t<key>PayloadDescription</key>
            \t\t\t<string>Adds the root certificate \(name)</string>
            \t\t\t<key>PayloadDisplayName</key>
            \t\t\t<string>\(name)</string>
            \t\t\t<key>PayloadIdentifier</key>
            \t\t\t<string>\(identifier).root</string>
            \t\t\t<key>PayloadType</key>
            \t\t\t<string>com.apple.security.root</string>
            \t\t\t<key>PayloadUUID</key>
            \t\t\t<string>\(payloadUUID)</string>
            \t\t\t<key>PayloadVersion</key>
            \t\t\t<integer>1</integer>
            \t\t</dict>
            \t</array>
            \t<key>PayloadDescription</key>
            \t<string>Lets mitm-proxy, a test proxy, intercept this device's HTTPS. Install it on test devices only, and remove it when done testing.</string>
            \t<key>PayloadDisplayName</key>
            \t<string>\(name)</string>
            \t<key>PayloadIdentifier</key>
            \t<string>\(identifier)</string>
            \t<key>PayloadOrganization</key>
            \t<string>mitm-proxy</string>
            \t<key>PayloadRemovalDisallowed</key>
            \t<false/>
            \t<key>PayloadType</key>
            \t<string>Configuration</string>
            \t<key>PayloadUUID</key>
            \t<string>\(profileUUID)</string>
            \t<key>PayloadVersion</key>
            \t<integer>1</integer>
            </dict>
            </plist>

            """
    }

    /// 16 bytes as an RFC 9562 version 8 (custom) UUID: the version and variant bits set, the rest from `bytes`.
    static func uuid(_ bytes: [UInt8]) -> String {
        var bytes = bytes
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = DigitText.hex(bytes, uppercase: true)
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(
                hex[
                    hex.index(
                        hex.startIndex, offsetBy: range.lowerBound)..<hex.index(
                            hex.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }
}
