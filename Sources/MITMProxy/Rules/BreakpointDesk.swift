import Foundation
import MITMCore
import MITMIO
import MITMWebUI
import Synchronization

/// The exchanges paused at breakpoints, as the web UI lists them, and the way back to each one's relay: the web queue
/// asks, the relay's loop acts. A relay lists an exchange when its machine says `hold` and unlists it when the
/// machine lets it go; the relay's connection sweep times a pause out (`BreakpointMachine`'s deadline, on the
/// injected clock).
final class BreakpointDesk: Sendable {
    private struct Entry {
        var paused: BreakpointPause
        let deliver: @Sendable (BreakpointPause.Answer) -> Void
    }

    private let entries = Mutex<[Int: Entry]>([:])
    private let nextID = Atomic<Int>(1)
    private let listener = Mutex<(@Sendable ([BreakpointPause]) -> Void)?>(nil)

    /// `listen` hears the whole list after every change (the web UI's feed).
    func onChange(_ listen: @escaping @Sendable ([BreakpointPause]) -> Void) {
        listener.withLock { $0 = listen }
    }

    /// Lists `exchange` as paused until `deadline` (monotonic, on `clock`); returns its number. The web UI's answer
    /// reaches `answered`, with that number, on `loop` (the relay's).
    func hold(
        _ exchange: BreakpointPause.Exchange, deadline: UInt64, clock: ProxyClock, loop: EventLoop,
        answered: @escaping @Sendable (BreakpointPause.Answer, Int) -> Void
    ) -> Int {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let now = clock.now()
        let since = clock.wallMilliseconds
        let left = deadline > now ? Double(deadline - now) / 1e6 : 0
        let paused = BreakpointPause(id: id, exchange: exchange, since: since, abortsAt: since + left)
        entries.withLock { $0[id] = Entry(paused: paused) { answer in loop.execute { answered(answer, id) } } }
        changed()
        return id
    }

    /// Shows pause `id`'s body as `body` (it arrived whole after the pause was listed).
    func update(_ id: Int, body: PausedBody) {
        let updated = entries.withLock { entries -> Bool in
            guard entries[id] != nil else { return false }
            entries[id]?.paused.exchange.body = body
            return true
        }
        if updated { changed() }
    }

    /// Unlists pause `id` (answered, timed out, or its exchange gone).
    func unlist(_ id: Int) {
        guard entries.withLock({ $0.removeValue(forKey: id) }) != nil else { return }
        changed()
    }

    /// Every paused exchange, oldest first.
    var paused: [BreakpointPause] {
        entries.withLock { $0.values.map(\.paused) }.sorted { $0.id < $1.id }
    }

    /// Hands the web UI's `answer` to pause `id`'s relay; why it cannot, or nil when it was handed on.
    func answer(_ id: Int, _ answer: BreakpointPause.Answer) -> PauseRefusal? {
        guard let entry = entries.withLock({ $0[id] }) else {
            return .notPaused(
                "no exchange is paused as number \(id) (it was continued, aborted or timed out, or its client left)")
        }
        if case .continued(let edit) = answer, let problem = Self.problem(edit, for: entry.paused.exchange) {
            return .invalid(problem)
        }
        entry.deliver(answer)
        return nil
    }

    /// Why `edit` does not fit `exchange`, or nil.
    private static func problem(_ edit: BreakpointEdit, for exchange: BreakpointPause.Exchange) -> String? {
        if let problem = edit.problem { return problem }
        if let url = edit.url, let problem = urlProblem(url, for: exchange) { return problem }
        if edit.method != nil, exchange.phase == .response { return "the method of a paused response cannot change" }
        if edit.status != nil, exchange.phase == .request { return "a paused request has no status to change" }
        if let status = edit.status, status < 200 {
            return "a paused response's status stays between 200 and 599, not \(status)"
        }
        if edit.body != nil, exchange.body.text == nil, let reason = exchange.body.notEditable {
            return "the body cannot be edited: \(reason)"
        }
        return nil
    }

    /// Why a web UI user on another machine may not make `edit` to pause `id` (it sends the request to another host,
    /// which that user's own requests could not reach perhaps), or nil.
    func hostChange(_ id: Int, _ edit: BreakpointEdit) -> PauseRefusal? {
        guard let paused = entries.withLock({ $0[id]?.paused.exchange }), let url = edit.url,
            case .absolute(let edited)? = try? RequestTarget.parse(url, method: "GET"),
            case .absolute(let original)? = try? RequestTarget.parse(paused.url, method: "GET")
        else { return nil }
        guard edited.host.lowercased() != original.host.lowercased() || edited.port != original.port else { return nil }
        return .forbidden(
            "from another machine, a paused request's URL may change only in its path and query "
                + "(start the proxy with --allow-local-targets to allow more)")
    }

    /// Why `url` cannot replace the URL of `paused`, or nil.
    static func urlProblem(_ url: String, for paused: BreakpointPause.Exchange) -> String? {
        guard paused.phase == .request else { return "the URL of a paused response cannot change" }
        guard case .absolute(let edited)? = try? RequestTarget.parse(url, method: "GET") else {
            return "\"\(url)\" is not an absolute http:// or https:// URL"
        }
        guard case .absolute(let original)? = try? RequestTarget.parse(paused.url, method: "GET") else { return nil }
        if paused.hostFixed,
            edited.scheme != original.scheme || edited.host.lowercased() != original.host.lowercased()
                || edited.port != original.port
        {
            return
                "this request travels in a TLS connection to \(original.authority): only its path and query may change "
                + "(resend it from the flow to send it elsewhere)"
        }
        if !paused.hostFixed, edited.scheme != "http" { return "a plain-HTTP request stays http://" }
        return nil
    }

    private func changed() {
        guard let listen = listener.withLock({ $0 }) else { return }
        listen(paused)
    }
}
