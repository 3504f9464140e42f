import Foundation
import MITMCore
import Synchronization

/// The exchanges paused at breakpoints, as the web UI lists them, and the way back to each one's relay: the web queue
/// asks, the relay's loop acts. A relay lists an exchange when its machine says `hold` and unlists it when the
/// machine lets it go.
final class BreakpointDesk: Sendable {
    /// A paused exchange as the web UI shows it.
    struct Paused: Encodable, Sendable {
        let id: Int
        let phase: BreakpointPhase
        let rule: String
        let connection: Int
        let method: String
        let url: String
        /// The response's status, at a response breakpoint.
        let status: Int?
        let headers: [[String]]
        /// Milliseconds since 1970: when it paused, and when it is aborted unless answered.
        let since: Double
        let abortsAt: Double
        /// On an intercepted connection the host is fixed: only the path and query of the URL may change.
        let hostFixed: Bool
    }

    /// The web UI's answer to one paused exchange.
    enum Answer: Sendable {
        case continued(BreakpointEdit)
        case aborted
    }

    private struct Entry {
        var paused: Paused
        let deliver: @Sendable (Answer) -> Void
    }

    private let entries = Mutex<[Int: Entry]>([:])
    private let nextID = Atomic<Int>(1)
    private let listener = Mutex<(@Sendable ([Paused]) -> Void)?>(nil)

    /// `listen` hears the whole list after every change (the web UI's feed).
    func onChange(_ listen: @escaping @Sendable ([Paused]) -> Void) {
        listener.withLock { $0 = listen }
    }

    /// A number for a new pause.
    func newID() -> Int { nextID.add(1, ordering: .relaxed).oldValue }

    /// Lists `paused`; `deliver` takes the web UI's answer to it (and must hop to the relay's loop).
    func list(_ paused: Paused, deliver: @escaping @Sendable (Answer) -> Void) {
        entries.withLock { $0[paused.id] = Entry(paused: paused, deliver: deliver) }
        changed()
    }

    /// Unlists pause `id` (answered, timed out, or its exchange gone).
    func unlist(_ id: Int) {
        guard entries.withLock({ $0.removeValue(forKey: id) }) != nil else { return }
        changed()
    }

    /// Every paused exchange, oldest first.
    var paused: [Paused] {
        entries.withLock { $0.values.map(\.paused) }.sorted { $0.id < $1.id }
    }

    /// Hands the web UI's `answer` to pause `id`'s relay; why it cannot, or nil when it was handed on.
    func answer(_ id: Int, _ answer: Answer) -> String? {
        guard let entry = entries.withLock({ $0[id] }) else {
            return "no exchange is paused as number \(id) (it was continued, aborted or timed out, or its client left)"
        }
        if case .continued(let edit) = answer {
            if let problem = edit.problem { return problem }
            if let url = edit.url, let problem = Self.urlProblem(url, for: entry.paused) { return problem }
        }
        entry.deliver(answer)
        return nil
    }

    /// Why a web UI user on another machine may not make `edit` to pause `id` (it sends the request to another host,
    /// which that user's own requests could not reach perhaps), or nil.
    func hostChange(_ id: Int, _ edit: BreakpointEdit) -> String? {
        guard let paused = entries.withLock({ $0[id]?.paused }), let url = edit.url,
              case .absolute(let edited)? = try? RequestTarget.parse(url, method: "GET"),
              case .absolute(let original)? = try? RequestTarget.parse(paused.url, method: "GET") else { return nil }
        guard edited.host.lowercased() != original.host.lowercased() || edited.port != original.port else { return nil }
        return "from another machine, a paused request's URL may change only in its path and query "
            + "(start the proxy with --allow-local-targets to allow more)"
    }

    /// Why `url` cannot replace the URL of `paused`, or nil.
    static func urlProblem(_ url: String, for paused: Paused) -> String? {
        guard paused.phase == .request else { return "the URL of a paused response cannot change" }
        guard case .absolute(let edited)? = try? RequestTarget.parse(url, method: "GET") else {
            return "\"\(url)\" is not an absolute http:// or https:// URL"
        }
        guard case .absolute(let original)? = try? RequestTarget.parse(paused.url, method: "GET") else { return nil }
        if paused.hostFixed, edited.scheme != original.scheme || edited.host.lowercased() != original.host.lowercased()
            || edited.port != original.port {
            return "this request travels in a TLS connection to \(original.authority): only its path and query may change "
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
