import Foundation
import MITMCore
import MITMIO

/// Who the client of this connection is: its address, its TLS fingerprint, and its process when it is on this machine.
extension ProxyConnection {
    /// Starts looking up the client's process, when lookups are on and the client is on this machine: now, while its
    /// socket is surely open (a refusing client may exit right after it hangs up).
    func startProcessLookup() {
        let configuration = context.configuration
        guard configuration.identifyProcesses, let address = clientAddress,
            let port = Self.port(ofPeer: clientSocket.peerDescription)
        else { return }
        // A captured command's sockets are in its namespace's tables, not this one's.
        let captured = context.isCapturedClient(address)
        guard LocalAddresses.contains(address) || captured else { return }
        let tables = captured ? context.captured.socketTables : nil
        if captured && tables == nil { return }
        processLookup = ClientProcessLookup(
            address: address, port: port, remote: clientsPeer, treeRoot: configuration.clientCommandRoot,
            socketTables: tables ?? ProcessFinder.systemSocketTables, loop: loop)
    }

    /// The client's own peer address: where a redirected connection was going, else this end of the connection.
    private var clientsPeer: (address: String, port: Int)? {
        let peer =
            transparent?.originalDestination
            ?? (clientSocket as? StreamSocket).flatMap { SocketAddress.local(of: $0.descriptor) }
        return peer.map { ($0.host, $0.port) }
    }

    /// The client's identity. Its process is known by now: a connection with a lookup is read only once it answered
    /// (`start`), and an identity is asked for only after bytes were read.
    func clientIdentity(_ hello: ClientHello?) -> ClientIdentity {
        let address = clientAddress ?? "unknown"
        let fingerprint = hello.map(FingerprintMemo.fingerprint)
        let stack = fingerprint.flatMap(ProxyContext.knownStacks.stack(for:))
        if let answer = processLookup?.answer {
            return ClientIdentity(
                address: address, fingerprint: fingerprint, stack: stack, process: answer.process,
                processUnknown: answer.unknown)
        }
        let reason: ProcessUnknownReason =
            !LocalAddresses.contains(address) && !context.isCapturedClient(address)
            ? .remote
            : context.configuration.identifyProcesses ? .gone : .notLookedUp
        return ClientIdentity(address: address, fingerprint: fingerprint, stack: stack, processUnknown: reason)
    }

    /// The port of a `host:port` or `[v6]:port` peer description.
    private static func port(ofPeer description: String) -> Int? {
        description.split(separator: ":").last.flatMap { Int($0) }
    }
}
