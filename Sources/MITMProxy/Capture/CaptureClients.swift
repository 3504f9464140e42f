/// The clients of a captured command (`--capture`): the one address its network namespace has, the address the proxy
/// has on the namespace's link (where its DNS questions are answered), and nothing else can connect from there.
public struct CaptureClients: Sendable, Equatable {
    /// The namespace's address: every connection from it belongs to the client command.
    public var clientAddress: String
    /// This machine's address on the namespace's link: the transparent listener and the DNS responder bind it.
    public var hostAddress: String

    public init(clientAddress: String, hostAddress: String) {
        self.clientAddress = clientAddress
        self.hostAddress = hostAddress
    }
}
