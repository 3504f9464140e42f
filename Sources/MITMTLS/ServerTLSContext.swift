import CMITMTLSShims
import COpenSSL
import Dispatch
import Synchronization

/// The `SSL_CTX`s for client-facing (server-role) connections: TLS 1.2+, ATS-compatible suites, ALPN chosen
/// per connection from `TLSConnection.offeredALPN`. Besides the base context, one per certificate presented, made
/// off the loops after its first use: a connection on it starts with its certificate and key in place instead of
/// installing them (and cross-checking the key against the certificate) again, 40 k instructions per handshake.
/// Making one costs 1.5 M instructions (`SSL_CTX_new`), more than a resumed handshake, so a host's first
/// connections do not wait for it: meanwhile they install the certificate on the base context.
// @unchecked Sendable: `base` is configured once in init; OpenSSL contexts are safe to share across threads;
// the identity contexts are behind a mutex.
public final class ServerTLSContext: @unchecked Sendable {
    /// The configuration and the session ticket keys every identity's context shares (so that a ticket one issued
    /// resumes on another: on the base context before the identity's own existed, or after it was dropped).
    let base: ServerIdentityContext
    private let identities = Mutex<[ServerIdentityContext.Identity: Slot]>([:])
    private let preparation = DispatchQueue(label: "mitm-proxy.tls-contexts", qos: .utility)
    /// Contexts kept at most (about 13 KiB each); past it they are all dropped and made again as hosts come back.
    private static let identityCapacity = 256

    private enum Slot {
        case preparing
        case ready(ServerIdentityContext)
        /// OpenSSL refused the identity on a context of its own: its connections keep installing it (and say why).
        case unavailable
    }

    /// Creates the shared server configuration.
    public init() throws(TLSError) {
        base = try ServerIdentityContext(sharingTicketKeysOf: nil, presenting: nil)
    }

    /// The context presenting `identity` if it has been made; otherwise nil, and it is made off the loops.
    func preparedContext(presenting identity: ServerIdentityContext.Identity) -> ServerIdentityContext? {
        let (prepared, startPreparing) = identities.withLock { slots -> (ServerIdentityContext?, Bool) in
            switch slots[identity] {
            case .ready(let context): return (context, false)
            case .preparing, .unavailable: return (nil, false)
            case nil:
                if slots.count >= Self.identityCapacity { slots.removeAll(keepingCapacity: true) }
                slots[identity] = .preparing
                return (nil, true)
            }
        }
        if startPreparing { preparation.async { self.prepare(identity) } }
        return prepared
    }

    private func prepare(_ identity: ServerIdentityContext.Identity) {
        let made = try? ServerIdentityContext(sharingTicketKeysOf: base, presenting: identity)
        identities.withLock { $0[identity] = made.map(Slot.ready) ?? .unavailable }
    }

    /// Returns once the contexts asked for so far are made.
    func waitForPreparations() {
        preparation.sync {}
    }
}

/// Picks the first protocol the connection allows, in the connection's preference order, that the client offered.
func selectALPN(
    ssl: OpaquePointer?,
    output: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    outputLength: UnsafeMutablePointer<UInt8>?,
    input: UnsafePointer<UInt8>?,
    inputLength: UInt32,
    argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let ssl, let input, let output, let outputLength,
        let connection = TLSConnection.owner(of: ssl)
    else { return SSL_TLSEXT_ERR_NOACK }
    let offered = UnsafeBufferPointer(start: input, count: Int(inputLength))
    for wanted in connection.offeredALPN {
        var index = 0
        while index < offered.count {
            let length = Int(offered[index])
            let start = index + 1
            guard start + length <= offered.count else { break }
            if offered[start..<start + length].elementsEqual(wanted.utf8) {
                output.pointee = input + start
                outputLength.pointee = UInt8(length)
                return SSL_TLSEXT_ERR_OK
            }
            index = start + length
        }
    }
    return SSL_TLSEXT_ERR_NOACK
}
