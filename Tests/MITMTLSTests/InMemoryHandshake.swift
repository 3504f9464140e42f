import Testing

@testable import MITMTLS

/// Runs a client and a server `TLSConnection` against each other in memory until both finish or one fails.
func interactInMemory(client: TLSConnection, server: TLSConnection, rounds: Int = 20) -> (
    client: TLSHandshakeStep, server: TLSHandshakeStep
) {
    var clientStep = client.handshake()
    var serverStep = TLSHandshakeStep.needsInput
    for _ in 0..<rounds {
        server.receive(client.takeOutput())
        serverStep = server.handshake()
        client.receive(server.takeOutput())
        clientStep = client.handshake()
        server.receive(client.takeOutput())
        if case .failed = clientStep { break }
        if case .failed = serverStep { break }
        if clientStep == .complete && serverStep == .complete { break }
    }
    if serverStep != .complete, case .needsInput = serverStep { serverStep = server.handshake() }
    return (clientStep, serverStep)
}

/// A server with a forged certificate for `name` and a client that trusts its CA, handshaken in memory.
func handshakenPair(name: String) throws -> (client: TLSConnection, server: TLSConnection) {
    let fixture = try ForgedHandshakeTests.fixture.get()
    let leaf = try fixture.forger.leaf(for: [.dns(name)])
    let server = try TLSConnection(
        server: fixture.server, certificate: leaf, key: fixture.forger.leafKey, alpn: [], host: name)
    let trusting = try ClientTLSContext(verify: true, extraCAFiles: [fixture.authority.files.certificatePEM])
    let client = try TLSConnection(client: trusting, serverName: name, verifyName: name, alpn: [])
    let handshake = interactInMemory(client: client, server: server)
    #expect(handshake.client == .complete && handshake.server == .complete)
    return (client, server)
}
