import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Another machine for a test: a network namespace joined to this one by a veth pair, this machine at `hostAddress`,
/// the other at `clientAddress` (a /30 of `prefix`). Needs root and iproute2; `make` says why it cannot be had.
final class NetworkNamespace: Sendable {
    let name: String
    let hostAddress: String
    let clientAddress: String
    /// This machine's end of the veth pair.
    let hostLink: String
    /// The namespace's end.
    let clientLink: String

    private static let counter = Atomic<Int>(0)

    /// Whether namespaces can be made here (root and `ip`).
    static var isAvailable: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
    }

    private init(name: String, hostAddress: String, clientAddress: String, hostLink: String, clientLink: String) {
        self.name = name
        self.hostLink = hostLink
        self.clientLink = clientLink
        self.hostAddress = hostAddress
        self.clientAddress = clientAddress
    }

    /// A namespace whose link uses addresses `prefix.N.1` (this machine) and `prefix.N.2` (the other), N unique in the
    /// run: `prefix` is two octets, `10.77` for a private network, `198.51` for a public-scope one (TEST-NET-2).
    static func make(prefix: String) async throws -> NetworkNamespace {
        let serial = counter.add(1, ordering: .relaxed).newValue
        let tag = "\(getpid() % 10_000)x\(serial)"
        // A network another run left behind (a killed test process cannot remove its namespaces) would make two links
        // claim one address: skip the /30s already on this machine.
        let addresses =
            (try? await Subprocess.run("/usr/sbin/ip", ["-4", "-o", "addr", "show"], timeout: .seconds(10)).stdoutText)
            ?? ""
        var third = (Int(getpid()) * 7 + serial) % 250 + 1
        var tries = 0
        while addresses.contains(" \(prefix).\(third).1/") && tries < 250 {
            third = third % 250 + 1
            tries += 1
        }
        let space = NetworkNamespace(
            name: "mitmt\(tag)", hostAddress: "\(prefix).\(third).1", clientAddress: "\(prefix).\(third).2",
            hostLink: "mh\(tag)", clientLink: "mc\(tag)")
        let host = space.hostLink
        let peer = space.clientLink
        let script = """
            set -e
            ip netns add \(space.name)
            ip link add \(host) type veth peer name \(peer)
            ip link set \(peer) netns \(space.name)
            ip addr add \(space.hostAddress)/30 dev \(host)
            ip link set \(host) up
            ip netns exec \(space.name) ip addr add \(space.clientAddress)/30 dev \(peer)
            ip netns exec \(space.name) ip link set \(peer) up
            ip netns exec \(space.name) ip link set lo up
            """
        let result = try await Subprocess.run("/bin/sh", ["-c", script], timeout: .seconds(20))
        guard result.succeeded else {
            space.remove()
            throw SubprocessError(description: "cannot make network namespace \(space.name): \(result)")
        }
        return space
    }

    /// Gives the link IPv6 addresses too: this machine `fd6d:6974:N::1`, the other `fd6d:6974:N::2` (a /64 of the unique local
    /// range, N this link's third IPv4 octet), without duplicate address detection, so that they are usable at once.
    func addIPv6() async throws -> (host: String, client: String) {
        let third = hostAddress.split(separator: ".")[2]
        let host = "fd6d:6974:\(third)::1"
        let client = "fd6d:6974:\(third)::2"
        let script = """
            set -e
            ip -6 addr add \(host)/64 dev \(hostLink) nodad
            ip netns exec \(name) ip -6 addr add \(client)/64 dev \(clientLink) nodad
            """
        let result = try await Subprocess.run("/bin/sh", ["-c", script], timeout: .seconds(20))
        guard result.succeeded else {
            throw SubprocessError(description: "cannot give \(name) IPv6 addresses: \(result)")
        }
        return (host, client)
    }

    /// Runs `arguments` inside the namespace.
    func run(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> SubprocessResult {
        try await Subprocess.run("/usr/sbin/ip", ["netns", "exec", name] + arguments, timeout: timeout)
    }

    /// Removes the namespace (and with it the veth pair).
    func remove() {
        // Blocking: tests call this from `defer`, which cannot await; `ip netns del` takes milliseconds.
        _ = try? Subprocess.runBlocking(
            "/usr/sbin/ip", ["netns", "del", name], stdin: nil, environment: nil, timeout: .seconds(10))
    }
}
