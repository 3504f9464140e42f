/// Everything `--capture` makes on the system for the proxy run with pid `pid`, named after that pid so that a later
/// run finds the leftovers of one that crashed: a network namespace, a veth pair with a /30 of 10/8 (this machine
/// `.1`, the namespace `.2`), a resolv.conf for the namespace, and an nftables table that redirects the namespace's TCP
/// to the transparent listener and its DNS to the proxy's responder and refuses the rest. Sans-IO: command lines and
/// texts for the steps of `CaptureMachine`; `CaptureNamespace` runs them.
public struct CapturePlan: Sendable, Equatable {
    public let pid: Int32

    public init(pid: Int32) { self.pid = pid }

    public static let namespacePrefix = "mitm-cap-"
    public static let tablePrefix = "mitm_cap_"

    public var namespace: String { Self.namespacePrefix + String(pid) }
    /// This machine's end of the veth pair (15 characters at most, as interface names must be).
    public var hostLink: String { "mcap\(pid)h" }
    public var clientLink: String { "mcap\(pid)n" }
    /// The nftables table (family `inet`).
    public var table: String { Self.tablePrefix + String(pid) }
    /// `ip netns exec` mounts the files here over the namespace's /etc.
    public var resolverDirectory: String { "/etc/netns/\(namespace)" }

    /// The /30's index in 10/8, spread from the pid so that two runs never share one and low pids avoid 10.0.x.x,
    /// which home and office networks use most.
    private var subnet: UInt32 { (UInt32(truncatingIfNeeded: pid) &+ 2_752_512) % 4_194_304 * 4 }
    public var hostAddress: String { Self.dotted(10 << 24 | subnet | 1) }
    public var clientAddress: String { Self.dotted(10 << 24 | subnet | 2) }

    /// The `ip` arguments that do `step`, in order; none for a step done otherwise (a file, nftables, the proxy).
    public func ipCommands(for step: CaptureMachine.Step) -> [[String]] {
        switch step {
        case .namespace: [["netns", "add", namespace]]
        case .link:
            [
                ["link", "add", hostLink, "type", "veth", "peer", "name", clientLink],
                ["link", "set", clientLink, "netns", namespace],
            ]
        case .addresses:
            [
                ["addr", "add", hostAddress + "/30", "dev", hostLink],
                ["link", "set", hostLink, "up"],
                ["-n", namespace, "addr", "add", clientAddress + "/30", "dev", clientLink],
                ["-n", namespace, "link", "set", clientLink, "up"],
                ["-n", namespace, "link", "set", "lo", "up"],
            ]
        case .routes: [["-n", namespace, "route", "add", "default", "via", hostAddress]]
        case .resolver, .listeners, .rules, .command: []
        }
    }

    /// The `ip` arguments that take `step` down; each may fail harmlessly (not there, or gone with the namespace).
    public func ipUndoCommands(for step: CaptureMachine.Step) -> [[String]] {
        switch step {
        case .namespace: [["netns", "del", namespace]]
        // Deleting either end of a veth pair deletes both; the namespace's end goes with the namespace too.
        case .link: [["link", "del", hostLink]]
        case .addresses: [["addr", "flush", "dev", hostLink], ["-n", namespace, "addr", "flush", "dev", clientLink]]
        case .routes: [["-n", namespace, "route", "del", "default"]]
        case .resolver, .listeners, .rules, .command: []
        }
    }

    /// The namespace's resolv.conf: the proxy's responder (at this machine's end of the link; the redirect catches a
    /// client that asks another server too).
    public var resolvConf: String { "nameserver \(hostAddress)\noptions attempts:2 timeout:2\n" }

    /// The nftables table (`nft -f`): TCP from the namespace to the transparent listener, DNS to the responder, every
    /// other UDP (QUIC included) and anything else the namespace sends refused, so that clients fall back to TCP at once.
    public func ruleset(transparentPort: Int, dnsPort: Int) -> String {
        """
        table inet \(table) {
            chain capture_nat {
                type nat hook prerouting priority dstnat; policy accept;
                iifname "\(hostLink)" udp dport 53 redirect to :\(dnsPort)
                iifname "\(hostLink)" meta l4proto tcp redirect to :\(transparentPort)
            }
            chain capture_input {
                type filter hook input priority filter; policy accept;
                iifname "\(hostLink)" meta l4proto udp udp dport != \(dnsPort) reject
            }
            chain capture_forward {
                type filter hook forward priority filter; policy accept;
                iifname "\(hostLink)" reject
            }
        }

        """
    }

    /// The `nft` arguments that take the `.rules` step down.
    public var teardownNFTCommand: [String] { ["delete", "table", "inet", table] }

    /// The pids whose capture leftovers are on the system: in `ip netns list`, `ip -o link show` and `nft list tables`
    /// output and the names under /etc/netns, every pid that `isRunning` says is not a running proxy.
    public static func leftovers(
        namespaces: String, links: String, tables: String, resolverDirectories: [String],
        isRunning: (Int32) -> Bool
    ) -> [CapturePlan] {
        var pids = Set<Int32>()
        for line in namespaces.split(separator: "\n") {
            if let name = line.split(separator: " ").first { pids.formUnion(pid(in: name, prefix: namespacePrefix)) }
        }
        for line in links.split(separator: "\n") {
            // `7: mcap812h@if6: <BROADCAST,...`
            let fields = line.split(separator: " ")
            guard fields.count > 1 else { continue }
            let name = fields[1].split(separator: "@").first ?? ""
            if name.hasPrefix("mcap"), name.hasSuffix("h") {
                pids.formUnion(Int32(name.dropFirst(4).dropLast()).map { [$0] } ?? [])
            }
        }
        for line in tables.split(separator: "\n") {
            // `table inet mitm_cap_812`
            if let name = line.split(separator: " ").last { pids.formUnion(pid(in: name, prefix: tablePrefix)) }
        }
        for name in resolverDirectories { pids.formUnion(pid(in: Substring(name), prefix: namespacePrefix)) }
        return pids.filter { $0 > 0 && !isRunning($0) }.sorted().map(CapturePlan.init)
    }

    private static func pid(in name: Substring, prefix: String) -> [Int32] {
        guard name.hasPrefix(prefix), let pid = Int32(name.dropFirst(prefix.count)) else { return [] }
        return [pid]
    }

    private static func dotted(_ value: UInt32) -> String {
        "\(value >> 24).\(value >> 16 & 0xFF).\(value >> 8 & 0xFF).\(value & 0xFF)"
    }
}
