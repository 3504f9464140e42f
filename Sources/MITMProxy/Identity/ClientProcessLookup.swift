import Dispatch
import Foundation
import MITMCore
import MITMIO

/// The lookup of one connection's client process, started when the connection arrives (the client may exit right
/// after it hangs up) and run off the loops; whoever needs the answer waits for it on the connection's loop.
// @unchecked Sendable: `state` is touched only on `loop` (the lookup's result is handed back there).
final class ClientProcessLookup: @unchecked Sendable {
    private enum State {
        case pending([(ClientProcess?, ProcessUnknownReason?) -> Void])
        case done(ClientProcess?, ProcessUnknownReason?)
    }

    private var state = State.pending([])
    private let loop: EventLoop

    /// Lookups run side by side: each connection waits for its own (it is read only once its process is known).
    private static let queue = DispatchQueue(
        label: "mitm-proxy.process-lookup", qos: .userInitiated, attributes: .concurrent)

    /// Starts looking up the process whose socket is `address`:`port`; `treeRoot`: the pid whose descendants belong
    /// to the client command; `socketTables`: the directory of the network namespace's `tcp` and `tcp6` tables.
    init(
        address: String, port: Int, remote: (address: String, port: Int)?, treeRoot: Int32?, socketTables: String,
        loop: EventLoop
    ) {
        self.loop = loop
        Self.queue.async { [self] in
            let result = ProcessFinder.find(
                address: address, port: port, remote: remote, treeRoot: treeRoot, socketTables: socketTables)
            loop.execute { [self] in
                switch result {
                case .success(let process): finish(process, nil)
                case .failure(let reason): finish(nil, reason)
                }
            }
        }
    }

    /// The answer, once it is in (on the loop).
    var answer: (process: ClientProcess?, unknown: ProcessUnknownReason?)? {
        if case .done(let process, let reason) = state { (process, reason) } else { nil }
    }

    /// Calls `body` on the loop with the answer: at once when it is in, else when it arrives.
    func whenDone(_ body: @escaping (ClientProcess?, ProcessUnknownReason?) -> Void) {
        switch state {
        case .pending(var waiting):
            waiting.append(body)
            state = .pending(waiting)
        case .done(let process, let reason):
            body(process, reason)
        }
    }

    private func finish(_ process: ClientProcess?, _ reason: ProcessUnknownReason?) {
        guard case .pending(let waiting) = state else { return }
        state = .done(process, reason)
        for body in waiting { body(process, reason) }
    }
}
