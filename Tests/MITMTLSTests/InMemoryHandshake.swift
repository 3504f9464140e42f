@testable import MITMTLS

/// Runs a client and a server `TLSConnection` against each other in memory until both finish or one fails.
func interactInMemory(client: TLSConnection, server: TLSConnection, rounds: Int = 20) -> (client: TLSHandshakeStep, server: TLSHandshakeStep) {
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

/// A fresh temporary directory path (not created).
func temporaryPath(_ label: String) -> String {
    let base = FileManager.default.temporaryDirectory.path
    return "\(base)/mitm-proxy-tests-\(label)-\(UUID().uuidString)"
}

import Foundation
