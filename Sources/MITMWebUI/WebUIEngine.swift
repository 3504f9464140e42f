import MITMCore
import MITMRules

/// What the web UI acts on besides the recording: the proxy that sends its replays, holds the exchanges paused at
/// breakpoints, keeps the breakpoints set from the page, and serves its own pages (the CA download). The proxy
/// implements it and links it (`WebUI.link(to:)`); the web UI asks it on its queue, never on a loop.
package protocol WebUIEngine: AnyObject, Sendable {
    /// Sends `head` with `body` through the proxy as a client would, for the web UI user at `peer`; `replaying`: the
    /// flow it resends, nil for a composed request. `done` hears once what became of it, on any thread.
    func send(
        _ head: HTTPRequestHead, body: [UInt8], replaying flow: Int?, for peer: String?,
        done: @escaping @Sendable (ReplayOutcome) -> Void)

    /// Every paused exchange, oldest first.
    var pausedExchanges: [BreakpointPause] { get }

    /// `listen` hears the whole list of paused exchanges after every change.
    func onPausesChanged(_ listen: @escaping @Sendable ([BreakpointPause]) -> Void)

    /// Hands `answer` to pause `id`, from the web UI user at `peer`; why it cannot, or nil when it was handed on.
    func answerPause(_ id: Int, _ answer: BreakpointPause.Answer, from peer: String?) -> PauseRefusal?

    /// The breakpoints set from the web UI.
    var webBreakpoints: [TrafficRule] { get }

    /// Replaces the breakpoints set from the web UI.
    func setWebBreakpoints(_ rules: [TrafficRule])

    /// The proxy's own page for `request`, a path that is not the web UI's (the CA download, the onboarding page).
    func localPage(for request: HTTPRequestHead) -> WebResponse
}

/// What became of a request the web UI sent through the proxy.
package enum ReplayOutcome: Sendable, Equatable {
    case answered(status: Int)
    case failed(String)
}

/// Why a paused exchange did not take the web UI's answer.
package enum PauseRefusal: Error, Equatable {
    /// No exchange is paused under that number (it was continued, aborted or timed out, or its client left).
    case notPaused(String)
    /// The web UI user may not make that edit from where they are.
    case forbidden(String)
    /// The answer does not fit the paused exchange.
    case invalid(String)

    /// What the web UI user reads.
    package var message: String {
        switch self {
        case .notPaused(let message), .forbidden(let message), .invalid(let message): message
        }
    }
}
