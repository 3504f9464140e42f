/// Something a run or an audit found that a team must act on.
public struct Finding: Sendable, Equatable, Codable {
    /// `critical`: a client accepted an invalid certificate.
    public var severity: String
    /// The host concerned.
    public var host: String
    /// The certificate profile the client accepted.
    public var profile: String
    /// What it means, in words.
    public var message: String

    /// Creates a finding.
    public init(severity: String, host: String, profile: String, message: String) {
        self.severity = severity
        self.host = host
        self.profile = profile
        self.message = message
    }

    /// One critical finding per host that accepted a certificate of an invalid profile.
    public static func acceptedInvalid(_ hosts: [HostVerdict]) -> [Finding] {
        hosts.filter(\.acceptedInvalidCertificate).compactMap { host in
            host.profile.map {
                Finding(
                    severity: "critical", host: host.host, profile: $0.description,
                    message: VerdictText.acceptedInvalid($0))
            }
        }
    }
}
