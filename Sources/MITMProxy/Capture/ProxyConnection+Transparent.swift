import MITMCore
import MITMIO

/// A connection redirected to the transparent listener: its tunnel goes to where the client was going, named by the
/// capture's DNS answer when the address is one (the SNI, when the client sends one, names it for the verdict anyway).
extension ProxyConnection {
    func openTransparentTunnel(_ arrival: TransparentArrival) {
        guard let destination = arrival.originalDestination,
            !context.ownListener.isOwn(host: destination.host, port: destination.port)
        else {
            context.events.emit(
                .badRequest(connectionID: id, peer: clientSocket.peerDescription, reason: Self.notRedirectedReason))
            close(reason: "not redirected to the transparent listener")
            return
        }
        let address = IPAddress(destination.host)?.unmappedIPv4?.description ?? destination.host
        let host = context.captured.name(for: address) ?? address
        openTunnel(host: host, port: destination.port, request: .transparent, asksForPins: false, leftover: [])
    }

    /// Plain HTTP on a redirected connection: relayed as the plain proxy relays a request (recorded, rules applied), each
    /// request named by its `Host`, all sent where the connection was going. The upstream dialled for the peek goes when
    /// the relay starts (the connection's life lets it go): the relay dials its own.
    func startTransparentHTTP(_ tunnel: Tunnel) {
        tunnel.serverFirstWatcher = nil
        let relay = HTTPRelay(
            connectionID: id, context: context, loop: loop, client: PlainLeg(socket: clientSocket),
            parser: HTTP1Parser(role: .request), mode: .plain)
        relay.transparentOrigin = TransparentOrigin(host: tunnel.host, port: tunnel.port)
        startRelaying(.http1(relay), for: .plainRequests)
        relay.start(initialBytes: tunnel.takePeeked())
    }

    static let notRedirectedReason =
        "a connection came to the transparent listener directly, not redirected to it by the system: "
        + "send traffic there with an nftables or iptables REDIRECT rule (README: Transparent mode), or point proxy-aware "
        + "clients at --port instead"
}
