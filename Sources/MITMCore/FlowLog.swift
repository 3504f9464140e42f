/// The web UI's memory of recent flows, bounded however long the run: at most `capacity` flows (the oldest
/// go first) and at most `bodyBudget` bytes of bodies (the oldest flows' bodies go first, their sizes stay).
/// Events in, changes out; no I/O.
package struct FlowLog: Sendable {
    /// What an event changed.
    package enum Change: Sendable, Equatable {
        /// A new flow.
        case added(Flow)
        /// A flow already listed changed (an idle handshake whose client later sent a request).
        case updated(Flow)
    }

    /// Flows kept at most.
    package let capacity: Int
    /// Body bytes kept at most, across flows.
    package let bodyBudget: Int

    /// The kept flows, oldest first, in a ring: flow `id` sits at `(start + id - firstID) % capacity`.
    private var ring: [Flow] = []
    private var start = 0
    private var firstID = 1
    private var nextID = 1
    /// Body bytes held by the kept flows.
    package private(set) var bodyBytes = 0
    /// Flows older than this id hold no bodies (they were released, or the flow is gone).
    private var bodyCursor = 1
    /// The TLS facts of recent intercepted connections, for the exchanges they carry; insertion-ordered and bounded.
    private var interceptions: [Int: SharedValue<ConnectionVerdict>] = [:]
    private var interceptionOrder: [Int] = []
    private var interceptionStart = 0
    /// The listed handshake flow of each connection, so a later interception of the same connection updates it.
    private var handshakeFlows: [Int: Int] = [:]
    /// Flows dropped because newer ones took their place.
    package private(set) var evicted = 0
    /// The flow of each WebSocket still open.
    private var webSocketFlows: [WebSocketSessionID: Int] = [:]
    /// What rules did to requests whose exchanges have not ended yet, oldest first.
    private var pendingFirings: [RuleFiring] = []
    /// Firings kept waiting for their exchange at most (one whose exchange never comes gives way).
    static let pendingFiringLimit = 256

    /// A log of at most `capacity` flows and `bodyBudget` body bytes.
    package init(capacity: Int = 10_000, bodyBudget: Int = 64 * 1024 * 1024) {
        self.capacity = max(1, capacity)
        self.bodyBudget = max(0, bodyBudget)
    }

    /// Flows kept now.
    package var count: Int { ring.count }

    /// Takes what `event` says about flows.
    package mutating func record(_ event: ProxyEvent) -> Change? {
        switch event {
        case .exchange(var kept):
            // The record is copied once, where it is bound; what is read of it is read before it moves into the flow.
            let firings = takeFirings(for: kept)
            let webSocket = kept.webSocket
            let tls = interceptions[kept.connectionID]
            kept.compact()
            let flow = append(.exchange(consume kept), tls: tls, ruleFirings: firings, opensWebSocket: webSocket != nil)
            if let webSocket { webSocketFlows[webSocket] = flow.id }
            return .added(flow)
        case .webSocketMessage(let message):
            return changeWebSocket(message.endpoint.session) { webSocket, keeps in
                webSocket.append(message, keeps: keeps)
            }
        case .webSocketClose(let close):
            defer { webSocketFlows.removeValue(forKey: close.endpoint.session) }
            return changeWebSocket(close.endpoint.session) { webSocket, _ in webSocket.close = close }
        case .ruleFired(let firing) where firing.url != nil:
            pendingFirings.append(firing)
            if pendingFirings.count > Self.pendingFiringLimit { pendingFirings.removeFirst() }
            return nil
        case .verdict(let verdict) where verdict.verdict.kind == .intercepted:
            rememberInterception(verdict)
            guard let id = handshakeFlows.removeValue(forKey: verdict.connectionID), let index = position(of: id) else {
                return nil
            }
            ring[index].content = .handshake(verdict)
            return .updated(ring[index])
        case .verdict(let verdict):
            let flow = append(.handshake(verdict))
            handshakeFlows[verdict.connectionID] = flow.id
            return .added(flow)
        case .tunnel(
            let connectionID, let host, let port, let bytesUp, let bytesDown, let reason, let passedThrough, let started
        ):
            let tunnel = Flow.Tunnel(
                connectionID: connectionID, host: host, port: port, bytesUp: bytesUp, bytesDown: bytesDown,
                reason: reason, passedThrough: passedThrough, started: started, ended: .now)
            return .added(append(.tunnel(tunnel)))
        default:
            return nil
        }
    }

    /// The flow numbered `id`, if it is still kept.
    package func flow(id: Int) -> Flow? {
        position(of: id).map { ring[$0] }
    }

    /// Every kept flow, oldest first.
    package var flows: [Flow] {
        Array(ring[start...] + ring[..<start])
    }

    /// Forgets every flow (numbering goes on, so a page never confuses an old flow with a new one).
    package mutating func clear() {
        ring = []
        start = 0
        firstID = nextID
        bodyCursor = nextID
        bodyBytes = 0
        handshakeFlows = [:]
        webSocketFlows = [:]
    }

    /// The firings that concern `record`'s request, taken from those waiting.
    private mutating func takeFirings(for record: ExchangeRecord) -> [RuleFiring] {
        guard !pendingFirings.isEmpty else { return [] }
        let url = record.url
        // By the exchange's number; a firing without one (an exchange recorded elsewhere) by its URL and method.
        let concerns = { (firing: RuleFiring) in
            guard firing.connectionID == record.connectionID else { return false }
            if let exchange = firing.exchange, record.exchange != 0 { return exchange == record.exchange }
            return firing.url == url && firing.method == record.request.method
        }
        let taken = pendingFirings.filter(concerns)
        if !taken.isEmpty { pendingFirings.removeAll(where: concerns) }
        return taken
    }

    /// Applies `change` to the WebSocket of `session`'s flow, keeping the body budget.
    private mutating func changeWebSocket(
        _ session: WebSocketSessionID,
        _ change: (inout FlowWebSocket, _ keeps: Bool) -> Void
    ) -> Change? {
        guard let id = webSocketFlows[session], let index = position(of: id), var webSocket = ring[index].webSocket
        else { return nil }
        let before = ring[index].bodyBytes
        change(&webSocket, id >= bodyCursor)
        ring[index].webSocket = webSocket
        bodyBytes += ring[index].bodyBytes - before
        releaseBodiesOverBudget()
        return position(of: id).map { .updated(ring[$0]) }
    }

    private func position(of id: Int) -> Int? {
        guard id >= firstID, id < firstID + ring.count else { return nil }
        return (start + id - firstID) % capacity
    }

    /// Lists a flow of `content` and returns it as listed. The flow is built in place and moved into the ring: a copy
    /// of a flow retains every string and array of its record.
    private mutating func append(
        _ content: consuming Flow.Content, tls: SharedValue<ConnectionVerdict>? = nil, ruleFirings: [RuleFiring] = [],
        opensWebSocket: Bool = false
    ) -> Flow {
        var flow = Flow(id: nextID, content: content, sharedTLS: tls)
        flow.ruleFirings = ruleFirings
        if opensWebSocket { flow.webSocket = FlowWebSocket() }
        let id = nextID
        nextID += 1
        bodyBytes += flow.bodyBytes
        place(flow)
        releaseBodiesOverBudget()
        return ring[position(of: id)!]
    }

    /// Puts `flow` at the ring's end, in the oldest flow's place once the ring is full.
    private mutating func place(_ flow: consuming Flow) {
        guard ring.count == capacity else {
            ring.append(flow)
            return
        }
        forgetOldest()
        ring[start] = flow
        start = (start + 1) % capacity
        firstID += 1
        bodyCursor = max(bodyCursor, firstID)
        evicted += 1
    }

    /// Lets the oldest flow's bodies and indexes go, before a new flow takes its place in the ring.
    private mutating func forgetOldest() {
        let id = ring[start].id
        bodyBytes -= ring[start].bodyBytes
        switch ring[start].content {
        case .handshake(let verdict):
            if handshakeFlows[verdict.connectionID] == id { handshakeFlows.removeValue(forKey: verdict.connectionID) }
        case .exchange(let record):
            if let session = record.webSocket, webSocketFlows[session] == id {
                webSocketFlows.removeValue(forKey: session)
            }
        case .tunnel:
            break
        }
    }

    /// Releases the oldest flows' bodies until the kept bodies fit the budget.
    private mutating func releaseBodiesOverBudget() {
        while bodyBytes > bodyBudget, let index = position(of: bodyCursor) {
            bodyBytes -= ring[index].bodyBytes
            ring[index].releaseBodies()
            bodyCursor += 1
        }
    }

    private mutating func rememberInterception(_ verdict: ConnectionVerdict) {
        if interceptions.updateValue(SharedValue(verdict), forKey: verdict.connectionID) != nil { return }
        // Bounded like the flows: a connection still carrying exchanges after `capacity` newer interceptions loses
        // its TLS facts in the list, not its exchanges.
        if interceptionOrder.count < capacity {
            interceptionOrder.append(verdict.connectionID)
        } else {
            interceptions.removeValue(forKey: interceptionOrder[interceptionStart])
            interceptionOrder[interceptionStart] = verdict.connectionID
            interceptionStart = (interceptionStart + 1) % capacity
        }
    }
}
