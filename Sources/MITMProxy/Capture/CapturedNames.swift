import MITMCore
import Synchronization

/// What the proxy learns about a captured client command while it runs: the names its DNS questions asked for (each
/// given a fake address, so a connection to one is known by name even without SNI), and the command's pid, whose
/// `/proc/PID/net` shows the namespace's sockets to the process lookup.
final class CapturedNames: Sendable {
    private let pool = Mutex(FakeAddressPool())
    private let commandPID = Atomic<Int32>(0)

    /// The fake address answered for `name`.
    func address(for name: String) -> [UInt8] { pool.withLock { $0.address(for: name) } }

    /// The name a fake address was answered for.
    func name(for address: String) -> String? { pool.withLock { $0.name(for: address) } }

    /// Records the client command's pid (it runs inside the namespace).
    func commandStarted(pid: Int32) { commandPID.store(pid, ordering: .releasing) }

    /// The directory of the socket tables (`tcp`, `tcp6`) of the namespace, once the command runs.
    var socketTables: String? {
        let pid = commandPID.load(ordering: .acquiring)
        return pid > 0 ? "/proc/\(pid)/net" : nil
    }
}
