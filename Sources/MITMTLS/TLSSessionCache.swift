import COpenSSL
import Synchronization

/// The latest TLS session per upstream (host, port, SNI), so reconnecting resumes instead of doing a
/// full handshake (the expensive part of a new upstream connection).
final class TLSSessionCache: Sendable {
    private let sessions = Mutex<[String: TLSSessionBox]>([:])
    private static let capacity = 4096

    func session(for key: String) -> TLSSessionBox? {
        sessions.withLock { $0[key] }
    }

    func store(_ session: TLSSessionBox, for key: String) {
        sessions.withLock { sessions in
            if sessions.count >= Self.capacity { sessions.removeAll(keepingCapacity: true) }
            sessions[key] = session
        }
    }
}

/// An owned `SSL_SESSION`.
// @unchecked Sendable: sessions are immutable once established and reference-counted by OpenSSL.
final class TLSSessionBox: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { SSL_SESSION_free(pointer) }
}
