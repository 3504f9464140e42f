import Dispatch

/// Runs and holds a Dispatch source without the sequences libdispatch mishandles: a source is only
/// activated the first time it is needed (never activated then suspended at once, which lost the
/// first readiness of some sockets), suspended and resumed in balance, and running when cancelled
/// (a suspended or inactive source never runs its cancel handler).
struct SourceGate {
    private let source: any DispatchSourceProtocol
    private var activated = false
    /// Whether the source is delivering events.
    private(set) var isRunning = false

    init(_ source: any DispatchSourceProtocol) {
        self.source = source
    }

    /// Starts or resumes delivery.
    mutating func run() {
        guard !isRunning else { return }
        isRunning = true
        if activated {
            source.resume()
        } else {
            activated = true
            source.activate()
        }
    }

    /// Stops delivery until `run()`.
    mutating func hold() {
        guard isRunning else { return }
        isRunning = false
        source.suspend()
    }

    /// Cancels the source so that its cancel handler runs.
    mutating func cancel() {
        run()
        source.cancel()
    }
}
