import CMITMShims

#if canImport(Glibc)
import Glibc
#endif

/// A fixed set of event loops; listeners accept on all of them (see `Listener`).
public final class EventLoopGroup: Sendable {
    /// The loops.
    public let loops: [EventLoop]

    /// Creates `count` loops (default: one per active core).
    public init(count: Int = System.coreCount) {
        loops = (0..<max(1, count)).map { EventLoop(index: $0) }
    }

    /// A group of existing loops (index i at position i).
    public init(loops: [EventLoop]) {
        precondition(
            !loops.isEmpty && loops.indices.allSatisfy { loops[$0].index == $0 }, "loops must be indexed 0..<count")
        self.loops = loops
    }
}

/// Machine facts.
public enum System {
    /// Returns freed heap pages to the system (glibc keeps them in its arenas otherwise).
    public static func releaseFreeMemory() {
        _ = mitm_release_free_memory()
    }

    /// Number of cores available to this process.
    public static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
