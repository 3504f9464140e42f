/// What `mitm-proxy pins` prints.
public enum PinsOutputFormat: String, Sendable, CaseIterable {
    /// A readable description of every certificate (the default).
    case text
    /// The same facts as JSON, for tools.
    case json
    /// An `Info.plist` `NSAppTransportSecurity` > `NSPinnedDomains` fragment.
    case ats
    /// Kotlin code building an OkHttp `CertificatePinner`.
    case okhttp
    /// An Android `network_security_config.xml` with a `<pin-set>`.
    case android
    /// A TrustKit configuration in Swift.
    case trustkit
    /// A `curl --pinnedpubkey` command line.
    case curl

    /// Whether the format is a ready-to-paste snippet rather than a report.
    public var isSnippet: Bool { self != .text && self != .json }
}
