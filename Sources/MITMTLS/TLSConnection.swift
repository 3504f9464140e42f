import CMITMTLSShims
import COpenSSL
import MITMCore

/// The outcome of a handshake step.
public enum TLSHandshakeStep: Sendable, Equatable {
    /// The handshake finished.
    case complete
    /// More bytes from the peer are needed (send `takeOutput()` first).
    case needsInput
    /// The handshake failed; the connection is unusable.
    case failed(TLSFailure)
}

/// The outcome of reading plaintext.
public enum TLSReadResult: Sendable, Equatable {
    /// `count` bytes were appended to the buffer.
    case data(count: Int)
    /// No complete record yet.
    case needsInput
    /// The peer sent close_notify.
    case closed
    /// A fatal TLS error.
    case failed(TLSFailure)
}

/// Why a TLS connection failed, as far as the proxy can tell.
public struct TLSFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// OpenSSL's reason (`certificate verify failed`, `wrong version number`, ...).
    public let reason: String
    /// The fatal alert the peer sent, if any.
    public let receivedAlert: TLSAlert?
    /// For upstream connections: the certificate verification error (`unable to get local issuer certificate`).
    public let verifyError: String?

    /// Creates a failure description.
    public init(reason: String, receivedAlert: TLSAlert?, verifyError: String?) {
        self.reason = reason
        self.receivedAlert = receivedAlert
        self.verifyError = verifyError
    }

    public var description: String {
        if let verifyError { return "certificate verification failed: \(verifyError)" }
        if let receivedAlert { return "peer sent TLS alert \(receivedAlert.name) (\(reason))" }
        return reason
    }
}

/// One TLS session over in-memory ciphertext: in with `receive` (or lent with `lendInput`), out with
/// `takeOutput`; no sockets.
/// Not thread-safe: use it from one queue (the connection's event loop).
public final class TLSConnection {
    private let ssl: OpaquePointer
    /// Freed after `ssl` (deinit runs before stored properties are released): the BIO points at them.
    private let ciphertext = CiphertextBuffers()
    /// Protocols the server role may select, most preferred first (ALPN).
    public let offeredALPN: [String]
    /// The last alert the peer sent (fatal or close_notify).
    public private(set) var receivedAlert: TLSAlert?
    /// The last alert this side sent.
    public private(set) var sentAlert: TLSAlert?
    /// Server role: whether the certificate has been written toward the client.
    public private(set) var certificateSent = false
    /// Whether the handshake completed.
    public private(set) var isHandshakeComplete = false
    /// Client role: where new sessions are kept, and under which key.
    private var failed = false
    fileprivate(set) var sessionCache: TLSSessionCache?
    fileprivate(set) var sessionKey: String?

    private init(context: OpaquePointer, offeredALPN: [String]) throws(TLSError) {
        guard let ssl = SSL_new(context) else { throw TLSError("creating a TLS connection") }
        guard let bio = ciphertext.makeBIO() else {
            SSL_free(ssl)
            throw TLSError("creating the ciphertext BIO")
        }
        self.ssl = ssl
        self.offeredALPN = offeredALPN
        SSL_set_bio(ssl, bio, bio)
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
        SSL_set_info_callback(ssl, recordTLSEvents)
    }

    /// A server-role connection presenting `certificate` with `key`, and `chain` (intermediates) after it, to a client
    /// that asked for `host` (its SNI, or the CONNECT host without one): a session it issues resumes only on a later
    /// connection for the same host presenting the same certificates (see `SessionBinding`).
    public convenience init(
        server context: ServerTLSContext,
        certificate: X509Certificate,
        key: PrivateKey,
        chain: [X509Certificate] = [],
        alpn: [String],
        host: String
    ) throws(TLSError) {
        let identity = ServerIdentityContext.Identity(certificate: certificate, key: key, chain: chain)
        // A leaf still being parsed back gets no context of its own: the connections after it present the parsed one.
        if certificate.keepsEncoding, let prepared = context.preparedContext(presenting: identity) {
            defer { withExtendedLifetime(prepared) {} }
            try self.init(context: prepared.pointer, offeredALPN: alpn)
        } else {
            try self.init(context: context.base.pointer, offeredALPN: alpn)
            guard SSL_use_certificate(ssl, certificate.pointer) == 1, SSL_use_PrivateKey(ssl, key.pointer) == 1 else {
                throw TLSError("installing the forged certificate")
            }
            for intermediate in chain where mitm_ssl_add1_chain_cert(ssl, intermediate.pointer) != 1 {
                throw TLSError("adding an intermediate certificate")
            }
        }
        let binding = SessionBinding.context(host: host, certificates: [certificate] + chain)
        guard SSL_set_session_id_context(ssl, binding, UInt32(binding.count)) == 1 else {
            throw TLSError("binding TLS sessions to \(host)")
        }
        SSL_set_accept_state(ssl)
    }

    /// A client-role connection to an upstream: SNI `serverName` (nil for IP literals), certificate
    /// checked against `verifyName` when the context verifies, ALPN `alpn` offered.
    public convenience init(
        client context: ClientTLSContext,
        serverName: String?,
        verifyName: String,
        port: Int = 0,
        alpn: [String]
    ) throws(TLSError) {
        try self.init(context: context.pointer, offeredALPN: [])
        if let serverName, mitm_ssl_set_host_name(ssl, serverName) != 1 {
            throw TLSError("setting SNI \(serverName)")
        }
        let key = "\(verifyName)|\(port)|\(serverName ?? "")|\(alpn.joined(separator: ","))"
        sessionCache = context.sessions
        sessionKey = key

        if context.verifies {
            let parameters = SSL_get0_param(ssl)
            let ok =
                IPAddressText.parse(verifyName) != nil
                ? X509_VERIFY_PARAM_set1_ip_asc(parameters, verifyName)
                : SSL_set1_host(ssl, verifyName)
            guard ok == 1 else { throw TLSError("setting the name to verify (\(verifyName))") }
        }
        if !alpn.isEmpty {
            var wire: [UInt8] = []
            for name in alpn where !name.isEmpty && name.utf8.count < 256 {
                wire.append(UInt8(name.utf8.count))
                wire.append(contentsOf: name.utf8)
            }
            guard SSL_set_alpn_protos(ssl, wire, UInt32(wire.count)) == 0 else { throw TLSError("setting ALPN") }
        }
        if let session = context.sessions.session(for: key) { SSL_set_session(ssl, session.pointer) }
        SSL_set_connect_state(ssl)
    }

    deinit {
        // Freeing a connection that never sent close_notify makes OpenSSL mark its session unusable;
        // a connection that completed and never failed keeps its session resumable.
        if isHandshakeComplete && !failed { SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN) }
        SSL_free(ssl)
    }

    static func owner(of ssl: OpaquePointer) -> TLSConnection? {
        guard let raw = SSL_get_ex_data(ssl, 0) else { return nil }
        return Unmanaged<TLSConnection>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Runs `body` with the connection `ssl` belongs to, without retaining it: the connection owns `ssl`, so it
    /// outlives every callback OpenSSL makes for it (for the callbacks that come many times per handshake).
    static func withOwner(of ssl: OpaquePointer, _ body: (TLSConnection) -> Void) {
        guard let raw = SSL_get_ex_data(ssl, 0) else { return }
        Unmanaged<TLSConnection>.fromOpaque(raw)._withUnsafeGuaranteedRef(body)
    }

    fileprivate func noteAlert(_ value: Int32, read: Bool) {
        let alert = TLSAlert(code: UInt8(truncatingIfNeeded: value & 0xFF))
        if read { receivedAlert = alert } else { sentAlert = alert }
    }

    fileprivate func noteState() {
        let state = SSL_get_state(ssl)
        if state == TLS_ST_SW_CERT || state == TLS_ST_SW_CERT_VRFY || state == TLS_ST_SW_SRVR_DONE {
            certificateSent = true
        }
    }

    /// Feeds ciphertext received from the peer (copied).
    public func receive(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        ciphertext.keep(bytes)
    }

    /// Feeds ciphertext received from the peer (copied).
    public func receive(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { receive($0) }
    }

    /// Lends ciphertext received from the peer while `body` runs (handshake steps and reads inside it use
    /// it in place); only what is still unread when `body` returns is copied.
    public func lendInput<R>(_ bytes: UnsafeRawBufferPointer, during body: () -> R) -> R {
        ciphertext.lend(bytes, during: body)
    }

    /// Where records go the moment OpenSSL writes them, when no earlier ones wait in `takeOutput()`: the socket's
    /// immediate send, which returns how many bytes it took (the rest waits for `takeOutput()`). Saves copying every
    /// record once more; set it once the handshake is done, so that a handshake flight still leaves in one send.
    public var directOutput: ((UnsafeRawBufferPointer) -> Int)? {
        get { ciphertext.directOutput }
        set { ciphertext.directOutput = newValue }
    }

    /// Bytes of ciphertext waiting to be sent to the peer.
    public var pendingOutputCount: Int { ciphertext.output.count }

    /// Hands the ciphertext waiting to `send`, which returns how many bytes it took; the rest keeps waiting. A buffer
    /// sent whole is let go: a connection between two batches holds no room for the next one.
    public func sendOutput(_ send: (UnsafeRawBufferPointer) -> Int) {
        ciphertext.sendOutput(send)
    }

    /// Takes (and clears) the ciphertext waiting to be sent.
    public func takeOutput() -> [UInt8] {
        ciphertext.takeOutput()
    }

    /// Advances the handshake with the input received so far.
    public func handshake() -> TLSHandshakeStep {
        clearErrorQueue()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isHandshakeComplete = true
            return .complete
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .needsInput
        default: return .failed(failure())
        }
    }

    /// Whether `read(into:)` could give anything now: ciphertext waits unread, or OpenSSL holds record bytes. When
    /// not, a read would only answer `.needsInput` (and cost a pass through the record layer to say so).
    public var mayHaveInput: Bool {
        ciphertext.inputCount > 0 || SSL_has_pending(ssl) == 1
    }

    /// Decrypts available application data into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> TLSReadResult {
        clearErrorQueue()
        var readCount = 0
        let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &readCount)
        if result == 1 { return .data(count: readCount) }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .needsInput
        case SSL_ERROR_ZERO_RETURN: return .closed
        default: return .failed(failure())
        }
    }

    /// Encrypts `bytes`; the ciphertext is then available from `takeOutput()`. Returns how many bytes were
    /// consumed: all of them unless the connection wants to read first (a handshake still in progress).
    ///
    /// The contexts set `SSL_MODE_ENABLE_PARTIAL_WRITE`, so one `SSL_write_ex` encrypts at most one record
    /// (16 KiB); this loops until every byte is in a record, or a caller writing more than a record at
    /// once would silently lose the rest.
    public func write(_ bytes: UnsafeRawBufferPointer) -> Result<Int, TLSFailure> {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .success(0) }
        var total = 0
        while total < bytes.count {
            clearErrorQueue()
            var written = 0
            let result = SSL_write_ex(ssl, base + total, bytes.count - total, &written)
            if result == 1 {
                total += written
                continue
            }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .success(total)
            default: return .failure(failure())
            }
        }
        return .success(total)
    }

    /// Encrypts `bytes` (all of them once the handshake is done: the output buffer always accepts).
    public func write(_ bytes: [UInt8]) -> Result<Int, TLSFailure> {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Queues a close_notify alert.
    public func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// Releases OpenSSL's record buffers while the connection is idle.
    public func releaseBuffers() {
        _ = mitm_ssl_release_buffers(ssl)
    }

    /// Releases OpenSSL's record buffers and the capacity of empty ciphertext buffers: an idle connection
    /// keeps no buffer from its busiest moment.
    public func compactBuffers() {
        releaseBuffers()
        ciphertext.compact()
    }

    /// The ALPN protocol agreed on, if any.
    public var negotiatedALPN: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        let name = UnsafeBufferPointer(start: data, count: Int(length))
        // Asked for several times per connection: the usual answers without decoding them each time.
        if Self.matches(name, "h2") { return "h2" }
        if Self.matches(name, "http/1.1") { return "http/1.1" }
        return String(decoding: name, as: UTF8.self)
    }

    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount && memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0
    }

    /// `TLSv1.3`, `TLSv1.2`, ...
    public var protocolVersion: String {
        switch SSL_version(ssl) {
        case TLS1_3_VERSION: "TLSv1.3"
        case TLS1_2_VERSION: "TLSv1.2"
        default: String(cString: SSL_get_version(ssl))
        }
    }

    /// The negotiated cipher suite name.
    public var cipherName: String {
        guard let cipher = SSL_get_current_cipher(ssl) else { return "" }
        return String(cString: SSL_CIPHER_get_name(cipher))
    }

    /// The `SSL_CTX` the connection was made from.
    var contextPointer: OpaquePointer? { SSL_get_SSL_CTX(ssl) }

    /// Whether this connection resumed an earlier session.
    public var isResumed: Bool { SSL_session_reused(ssl) == 1 }

    /// Whether this is the server side of a TLS 1.3 connection: what it writes as its handshake completes is only
    /// session tickets (its last flight left before the client's Finished).
    public var isTLS13Server: Bool { SSL_is_server(ssl) == 1 && SSL_version(ssl) == TLS1_3_VERSION }

    /// The peer's certificate chain as sent (leaf first).
    public var peerCertificates: [X509Certificate] {
        guard let chain = SSL_get_peer_cert_chain(ssl) else { return [] }
        return (0..<OPENSSL_sk_num(chain)).compactMap { index in
            guard let element = OPENSSL_sk_value(chain, index) else { return nil }
            let certificate = OpaquePointer(element)
            X509_up_ref(certificate)
            return X509Certificate(taking: certificate)
        }
    }

    /// The verification error of the peer's chain, or nil when it verified (or was not checked).
    public var verifyError: String? {
        let code = SSL_get_verify_result(ssl)
        guard code != X509_V_OK else { return nil }
        return String(cString: X509_verify_cert_error_string(code))
    }

    /// SSL_get_error needs an empty error queue before each operation. Failures drain it (`failure()`), so it is
    /// nearly always empty already: peeking is a fraction of what clearing every slot costs on each read and write.
    private func clearErrorQueue() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    private func failure() -> TLSFailure {
        failed = true
        let stack = OpenSSLErrorStack.drain()
        let verifyFailed = stack.entries.contains { $0.contains("certificate verify failed") }
        return TLSFailure(
            reason: stack.entries.isEmpty ? "connection closed during TLS" : stack.reason,
            receivedAlert: receivedAlert,
            verifyError: verifyFailed ? verifyError : nil)
    }
}

/// OpenSSL's info callback: records alerts in both directions and when the certificate goes out.
private func recordTLSEvents(ssl: OpaquePointer?, where event: Int32, value: Int32) {
    guard let ssl else { return }
    TLSConnection.withOwner(of: ssl) { connection in
        if event & SSL_CB_ALERT != 0 {
            connection.noteAlert(value, read: event & SSL_CB_READ != 0)
        }
        if event & SSL_CB_LOOP != 0 { connection.noteState() }
    }
}
