import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An nftables table of a test's own: TCP arriving on a link redirected to a local port. `remove()` deletes it.
final class NFTables: Sendable {
    let name: String
    /// `ip` (IPv4) or `ip6`.
    let family: String
    private static let counter = Atomic<Int>(0)

    static var isAvailable: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/nft")
    }

    private init(name: String, family: String) {
        self.name = name
        self.family = family
    }

    /// Redirects TCP of `family` (`ip`, or `ip6` for IPv6) arriving on `link` for port `port` to this machine's port
    /// `target` (on the link's address).
    static func redirect(from link: String, port: Int, to target: Int, family: String = "ip") async throws -> NFTables {
        let table = NFTables(name: "mitmt_\(getpid())_\(counter.add(1, ordering: .relaxed).newValue)", family: family)
        let rules = """
            table \(family) \(table.name) {
                chain prerouting {
                    type nat hook prerouting priority dstnat; policy accept;
                    iifname "\(link)" tcp dport \(port) redirect to :\(target)
                }
            }
            """
        let result = try await Subprocess.run(
            "/bin/sh", ["-c", "printf '%s\\n' \"$0\" | /usr/sbin/nft -f -", rules], timeout: .seconds(20))
        guard result.succeeded else {
            throw SubprocessError(description: "cannot add nftables table \(table.name): \(result)")
        }
        return table
    }

    func remove() {
        // Blocking: tests call this from `defer`, which cannot await; `nft delete table` takes milliseconds.
        _ = try? Subprocess.runBlocking(
            "/usr/sbin/nft", ["delete", "table", family, name], stdin: nil, environment: nil, timeout: .seconds(10))
    }
}
