import MITMCore
import MITMIO

/// What a client may ask of the proxy beyond being let in at accept (`ClientAccessPolicy`): the `--proxy-auth`
/// credentials on every proxy request, and, from another machine, no way to this machine's own services.
extension ProxyContext {
    /// Why `head` (a CONNECT or absolute-form request) may not use the proxy under `--proxy-auth`; nil when it may.
    /// The reason never repeats what the client sent.
    func authenticationProblem(_ head: HTTPRequestHead) -> String? {
        guard let credentials = configuration.proxyCredentials else { return nil }
        let values = head.headers.values("proxy-authorization")
        guard !values.isEmpty else { return "proxy authentication required: the request carries no Proxy-Authorization" }
        guard values.count == 1, credentials.accepts(values[0]) else { return "proxy authentication failed: wrong user name or password" }
        return nil
    }

    /// Seconds to wait before answering wrong credentials (sent, not missing: clients try without first) from a client
    /// at `address`.
    func credentialWait(afterWrongCredentialsFrom address: String?) -> Double {
        let now = Double(clock.now()) / 1e9
        let action = credentialBackoff.withLock { $0.handle(.rejected(address: address ?? "unknown", at: now)) }
        guard case .answerAfter(let seconds) = action else { return 0 }
        return seconds
    }

    /// The right credentials from `address`: its count of wrong ones starts again.
    func noteCredentialsAccepted(client address: String?) {
        guard configuration.proxyCredentials != nil else { return }
        _ = credentialBackoff.withLock { $0.handle(.accepted(address: address ?? "unknown")) }
    }

    /// Whether a client at `address` (an IP address) is kept from this machine's own addresses: every client not on
    /// loopback (one whose address cannot be read included), unless `--allow-local-targets`. A captured client command
    /// runs on this machine, in a namespace of its own: it is this machine's.
    func refusesLocalTargets(forClient address: String?) -> Bool {
        // The usual client, this machine over IPv4, is known by its text without parsing it (asked once per connection).
        !configuration.allowLocalTargets && address != "127.0.0.1" && IPAddress(address ?? "")?.scope != .loopback
            && !LocalTargetGuard.isThisMachine(address ?? "") && !isCapturedClient(address)
    }

    /// Whether `address` is the captured client command's namespace (`--capture`).
    func isCapturedClient(_ address: String?) -> Bool {
        guard let capture = configuration.capture, let address else { return false }
        return address == capture.clientAddress || IPAddress(address)?.unmappedIPv4?.description == capture.clientAddress
    }
}

/// The check behind `refusesLocalTargets`, made on the addresses actually dialled (after DNS and `--resolve`), so that
/// no name, short form (`127.1`) or rebinding trick reaches this machine's services.
enum LocalTargetGuard {
    /// Whether `address` (as a resolver or socket spells it) is this machine: loopback, unspecified, or an interface's.
    static func isThisMachine(_ address: String) -> Bool {
        let plain = IPAddress(address)?.unmappedIPv4?.description ?? address
        return LocalAddresses.contains(plain)
    }

    /// The `403` text for a client refused `host:port`, which reaches this machine at `address`.
    static func reason(host: String, port: Int, address: String, client: String?) -> String {
        let target = host == address ? "\(address)" : "\(host) (\(address))"
        return "\(target) port \(port) is on the proxy's own machine, and a client on another machine (\(client ?? "unknown")) may not "
            + "reach this machine's services through the proxy; start the proxy with --allow-local-targets to allow it"
    }
}
