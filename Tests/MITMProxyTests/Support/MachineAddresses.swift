import MITMCore
import MITMIO

/// This machine's own non-loopback addresses, for tests that need a client which is not on loopback: connecting to
/// one of them from this machine makes the kernel use it as the source address, so the proxy sees a client at it.
enum MachineAddresses {
    /// The first interface address with one of `scopes` (IPv4 first; never a link-local IPv6, which needs a zone).
    static func first(in scopes: [IPAddressScope]) -> String? {
        let candidates = LocalAddresses.interfaces().filter { !$0.address.contains("%") }.sorted {
            !$0.isIPv6 && $1.isIPv6
        }
        return candidates.first { IPAddress($0.address).map { scopes.contains($0.scope) } ?? false }?.address
    }

    /// Any address of this machine that is not loopback.
    static var nonLoopback: String? { first(in: [.privateNetwork, .sharedAddressSpace, .linkLocal, .publicInternet]) }

    /// `http://ADDRESS:PORT`, bracketing an IPv6 address.
    static func url(_ address: String, port: Int) -> String {
        address.contains(":") ? "http://[\(address)]:\(port)" : "http://\(address):\(port)"
    }
}
