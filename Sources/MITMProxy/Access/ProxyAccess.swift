import MITMCore

/// What a client may ask of the proxy beyond being let in at accept (`ClientAccessPolicy`): the `--proxy-auth`
/// credentials on every proxy request. From another machine, no way to this machine's own services: `LocalTargetPolicy`.
extension ProxyContext {
    /// Why `head` (a CONNECT or absolute-form request) may not use the proxy under `--proxy-auth`; nil when it may.
    /// The reason never repeats what the client sent.
    func authenticationProblem(_ head: HTTPRequestHead) -> String? {
        guard let credentials = configuration.proxyCredentials else { return nil }
        let values = head.headers.values("proxy-authorization")
        guard !values.isEmpty else {
            return "proxy authentication required: the request carries no Proxy-Authorization"
        }
        guard values.count == 1, credentials.accepts(values[0]) else {
            return "proxy authentication failed: wrong user name or password"
        }
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

    /// Whether `address` is the captured client command's namespace (`--capture`).
    func isCapturedClient(_ address: String?) -> Bool {
        guard let capture = configuration.capture, let address else { return false }
        return address == capture.clientAddress
            || IPAddress(address)?.unmappedIPv4?.description == capture.clientAddress
    }
}
