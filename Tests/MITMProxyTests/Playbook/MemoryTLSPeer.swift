import MITMIO
import MITMTLS

@testable import MITMProxy

/// The test's side of a memory stream speaking TLS (a client that verifies, or an origin with its own
/// certificate): drives the handshake as bytes arrive, then records the plaintext.
final class MemoryTLSPeer: StreamSocketDelegate, @unchecked Sendable {
    // @unchecked Sendable: touched on the loop only.
    let stream: MemoryStream
    let tls: TLSConnection
    private(set) var step = TLSHandshakeStep.needsInput
    private(set) var plaintext: [UInt8] = []
    private(set) var ended = false

    init(_ stream: MemoryStream, tls: TLSConnection, startsHandshake: Bool) {
        self.stream = stream
        self.tls = tls
        stream.delegate = self
        stream.resumeReading()
        if startsHandshake { advance() }
    }

    var isHandshakeComplete: Bool { step == .complete }

    func send(_ text: String) {
        _ = tls.write(Array(text.utf8))
        stream.write(tls.takeOutput())
    }

    func takeText() -> String {
        defer { plaintext = [] }
        return String(decoding: plaintext, as: UTF8.self)
    }

    private func advance() {
        if step != .complete { step = tls.handshake() }
        if step == .complete {
            var buffer = [UInt8](repeating: 0, count: 16_384)
            reading: while true {
                let result = buffer.withUnsafeMutableBytes { tls.read(into: $0) }
                switch result {
                case .data(let count): plaintext += buffer[0..<count]
                case .needsInput: break reading
                case .closed, .failed:
                    ended = true
                    break reading
                }
            }
        }
        let output = tls.takeOutput()
        if !output.isEmpty { stream.write(output) }
    }

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        tls.receive(bytes)
        advance()
    }

    func socketDidReadEOF(_ socket: any ByteStream) { ended = true }
    func socket(_ socket: any ByteStream, didFail error: SystemCallError) { ended = true }
    func socketDidDrain(_ socket: any ByteStream) {}
}

extension MemoryTLSPeer {
    /// Origins for `MemoryDialer` that answer TLS as `host` with a certificate from a throwaway CA (the proxy runs with
    /// `--upstream-insecure` then), offering http/1.1.
    static func origin(host: String) throws -> @Sendable (MemoryStream) -> MemoryTLSPeer {
        let authority = try CertificateAuthority.loadOrCreate(directory: TemporaryDirectory.path("origin-ca"))
        let forger = try LeafForger(authority: authority)
        let certificate = try forger.leaf(for: [ForgeNames.name(for: host)])
        let context = try ServerTLSContext()
        let key = forger.leafKey
        return { stream in
            let tls = try! TLSConnection(
                server: context, certificate: certificate, key: key, alpn: ["http/1.1"], host: host)
            return MemoryTLSPeer(stream, tls: tls, startsHandshake: false)
        }
    }
}
