import MITMCore
import MITMRules
import MITMWebUI

/// The proxy as the web UI acts on it: replays through its own port, the breakpoint desk, the web UI's breakpoint
/// rules, and its own pages.
extension ProxyContext: WebUIEngine {
    func send(
        _ head: HTTPRequestHead, body: [UInt8], replaying flow: Int?, for peer: String?,
        done: @escaping @Sendable (ReplayOutcome) -> Void
    ) {
        let tag = ReplayTags.Tag(replayOf: flow, guardedClient: guardedClient(forClient: peer))
        ReplayClient.send(head, body: body, tag: tag, context: self, done: done)
    }

    var pausedExchanges: [BreakpointPause] { breakpoints.paused }

    func onPausesChanged(_ listen: @escaping @Sendable ([BreakpointPause]) -> Void) {
        breakpoints.onChange(listen)
    }

    func answerPause(_ id: Int, _ answer: BreakpointPause.Answer, from peer: String?) -> PauseRefusal? {
        if case .continued(let edit) = answer, edit.url != nil, refusesLocalTargets(forClient: peer),
            let refusal = breakpoints.hostChange(id, edit)
        {
            return refusal
        }
        return breakpoints.answer(id, answer)
    }

    var webBreakpoints: [TrafficRule] { rules.webRuleList }

    func setWebBreakpoints(_ rules: [TrafficRule]) { self.rules.setWebRules(rules) }

    func localPage(for request: HTTPRequestHead) -> WebResponse {
        let page = LocalPages.response(
            for: request.target, request: request, authority: authority, advertised: configuration.advertised)
        return WebResponse(
            status: page.status, reason: page.reasonPhrase, contentType: page.contentType, body: page.body)
    }
}
