/// `--advertise HOST:PORT`: the address and port a phone types as its proxy when the proxy's own addresses are not
/// the ones it can reach (a container behind a published port, a port forward).
public struct AdvertisedAddress: Sendable, Equatable {
    /// A host name or an IP address (IPv6 without brackets).
    public let host: String
    public let port: Int

    public init(parsing text: String) throws(AdvertisedAddressError) {
        let parsed: (host: String, port: Int)
        do {
            parsed = try RequestTarget.parseAuthority(text, defaultPort: nil)
        } catch {
            throw AdvertisedAddressError(text: text, problem: error.reason)
        }
        if IPAddress(parsed.host)?.scope == .unspecified {
            throw AdvertisedAddressError(
                text: text, problem: "\(parsed.host) is a listen-on-all address, not one a phone can reach")
        }
        host = parsed.host
        port = parsed.port
    }

    /// The host as it goes into a URL: IPv6 in brackets.
    public var hostInURL: String { host.contains(":") ? "[\(host)]" : host }

    /// The onboarding page at this address, for a phone whose proxy is not set yet.
    public var onboardingURL: String { "http://\(hostInURL):\(port)/" }
}

/// Why an `--advertise` value was refused.
public struct AdvertisedAddressError: Error, Sendable, Equatable, CustomStringConvertible {
    public let text: String
    public let problem: String

    public var description: String {
        "--advertise \(text): \(problem); give HOST:PORT, the address and port a phone should type as its proxy "
            + "(e.g. this computer's Wi-Fi address and the port published for the container: 192.168.1.23:8888)"
    }
}
