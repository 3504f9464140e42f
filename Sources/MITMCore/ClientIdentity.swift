/// Who a client is, beyond its address (DESIGN.md "Who the client is"): one address carries many clients (every
/// client of a CI machine is 127.0.0.1; a phone carries the app, its WebViews and the system's services).
///
/// - The address tells machines apart.
/// - The TLS fingerprint tells TLS stacks and their settings apart (curl from Java, an app's OkHttp from its WebView);
///   two clients on the same stack with the same settings share it (two OkHttp clients of one app).
/// - The process, for a client on this machine, tells programs apart (two curl processes), and with a client command
///   whether it belongs to the command. A phone's processes are invisible.
///
/// Trust in the CA is proven per `key`: address, fingerprint, executable and client-command membership (a pid is
/// not in it, so one program proving trust then refusing in another run of itself still counts).
public struct ClientIdentity: Sendable, Hashable, Codable {
    /// The client's IP address.
    public var address: String
    /// The TLS fingerprint, when the client sent a ClientHello the proxy could read.
    public var fingerprint: ClientFingerprint?
    /// The TLS stack the fingerprint is known to belong to (a guess from the known-fingerprint table, not a fact).
    public var stack: String?
    /// The owning process, when the client is on this machine and it could be looked up.
    public var process: ClientProcess?
    /// Why `process` is nil.
    public var processUnknown: ProcessUnknownReason?

    /// Creates an identity.
    public init(
        address: String, fingerprint: ClientFingerprint? = nil, stack: String? = nil, process: ClientProcess? = nil,
        processUnknown: ProcessUnknownReason? = nil
    ) {
        self.address = address
        self.fingerprint = fingerprint
        self.stack = stack
        self.process = process
        self.processUnknown = process == nil ? processUnknown : nil
    }

    /// What trust is proven for, and what siblings share. Starts with the address and a space.
    public var key: String {
        var key = address + " " + (fingerprint?.stable ?? "no-clienthello")
        if let process {
            key += " " + process.executable
            if process.inClientCommand == false { key += " (outside the client command)" }
        }
        return key
    }

    /// For a person: `curl (pid 812)`, `python3 (pid 840) at 10.0.0.5`, `OkHttp? at 192.168.1.7 [t13d...]`.
    public var label: String { label(pids: []) }

    /// The label naming every pid in `pids` (`curl (pids 812, 815)`) when there are several.
    public func label(pids: [Int32]) -> String {
        let place = IPAddress(address)?.scope == .loopback ? "" : " at \(address)"
        if let process {
            let outside = process.inClientCommand == false ? ", outside the client command" : ""
            let list = pids.count > 1 ? "pids " + pids.map(String.init).joined(separator: ", ") : "pid \(process.pid)"
            return "\(process.name) (\(list)\(outside))\(place)"
        }
        let fingerprintText = fingerprint.map { " [\($0.ja4)]" } ?? ""
        let lookupFailure = processUnknown.flatMap { $0.isLookupFailure ? " (\($0.text))" : nil } ?? ""
        if let stack { return "\(stack)?\(place.isEmpty ? " at \(address)" : place)\(fingerprintText)\(lookupFailure)" }
        return "\(address)\(fingerprintText)\(lookupFailure)"
    }

    /// The address part of a `key`.
    public static func address(ofKey key: String) -> String {
        key.split(separator: " ", maxSplits: 1).first.map(String.init) ?? key
    }
}
