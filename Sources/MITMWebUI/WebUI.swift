import Dispatch
import Foundation
import MITMCore
import Synchronization

/// The web UI's side of the proxy: keeps recent flows (fed from the recording queue, like every other recorder),
/// answers the page's requests off the loops, and feeds every open page live. Each page has its own bounded
/// feed: a page that reads slowly loses flow messages (and is told so), never slows the recording or the loops.
package final class WebUI: Sendable {
    let configuration: WebUIConfiguration
    let access: WebAccess
    /// Where replies are computed: never on a loop, so a large HAR does not hold up relaying.
    package let queue = DispatchQueue(label: "mitm-proxy.web")
    private let log: Mutex<FlowLog>
    private let feeds = Mutex<[ObjectIdentifier: WebFeed]>([:])
    private let boardScheduled = Atomic<Bool>(false)
    /// Flows whose WebSockets passed messages since open pages last heard of them.
    private let chattyFlows = Mutex<Set<Int>>([])
    private let chattyScheduled = Atomic<Bool>(false)
    private let reportSource = Mutex<(@Sendable () -> VerdictReport)?>(nil)
    private let droppedEvents: @Sendable () -> Int
    /// The proxy the acting paths (replay, breakpoints) act on.
    let engineLink = WebEngineLink()

    /// The proxy, while it runs.
    var engine: (any WebUIEngine)? { engineLink.engine }

    /// How long board changes are gathered before open pages get the new board.
    static let boardDelay = DispatchTimeInterval.milliseconds(150)
    /// How long a WebSocket's messages are gathered before open pages get its row again.
    static let messageDelay = DispatchTimeInterval.milliseconds(100)

    /// A web UI as `configuration` says; `isOwnAddress` tells this machine's interface addresses (a client there is
    /// this machine), `droppedEvents` how many events the recording dropped.
    package init(
        configuration: WebUIConfiguration, isOwnAddress: @escaping @Sendable (String) -> Bool,
        droppedEvents: @escaping @Sendable () -> Int
    ) {
        self.configuration = configuration
        access = WebAccess(token: configuration.token, isOwnAddress: isOwnAddress)
        log = Mutex(FlowLog(capacity: configuration.flowLimit, bodyBudget: configuration.bodyBudget))
        self.droppedEvents = droppedEvents
    }

    /// Where the board's report comes from (set once the server knows its address and findings).
    package func showReport(from source: @escaping @Sendable () -> VerdictReport) {
        reportSource.withLock { $0 = source }
    }

    /// The run's report as of now, or nil before `showReport`.
    func report() -> VerdictReport? {
        reportSource.withLock { $0 }?()
    }

    /// The board as of now.
    func board() -> PinningBoard? {
        report().map { PinningBoard($0, expectations: configuration.expectations, droppedEvents: droppedEvents()) }
    }

    // MARK: recording

    /// Takes a recorded event (on the recording queue).
    package func observe(_ event: ProxyEvent) {
        let change = log.withLock { $0.record(event) }
        let open = feeds.withLock { Array($0.values) }
        guard !open.isEmpty else { return }
        if case .updated(let flow)? = change, case .webSocketMessage = event {
            scheduleMessages(of: flow.id)
        } else if let change {
            let flow: Flow
            switch change {
            case .added(let added): flow = added
            case .updated(let updated): flow = updated
            }
            if let frame = Self.frame("flow", FlowSummary(flow)) {
                for feed in open { feed.pushFlow(frame) }
            }
        }
        switch event {
        case .exchange, .verdict, .proxyProbe, .upstreamFailed, .finding: scheduleBoard()
        default: break  // the board is the verdict account: other events do not change it
        }
    }

    /// Sends open pages the new board soon, once for a burst of changes.
    private func scheduleBoard() {
        guard boardScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        queue.asyncAfter(deadline: .now() + Self.boardDelay) { [self] in
            boardScheduled.store(false, ordering: .releasing)
            let open = feeds.withLock { Array($0.values) }
            guard !open.isEmpty, let board = board(), let frame = Self.frame("board", board) else { return }
            for feed in open { feed.pushBoard(frame) }
        }
    }

    /// Sends open pages the rows of busy WebSockets soon, once for a burst of messages (a chatty socket would
    /// otherwise fill every page's feed).
    private func scheduleMessages(of id: Int) {
        chattyFlows.withLock { _ = $0.insert(id) }
        guard
            chattyScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        queue.asyncAfter(deadline: .now() + Self.messageDelay) { [self] in
            chattyScheduled.store(false, ordering: .releasing)
            let ids = chattyFlows.withLock { ids in
                defer { ids = [] }
                return ids
            }
            let open = feeds.withLock { Array($0.values) }
            guard !open.isEmpty else { return }
            for id in ids.sorted() {
                guard let flow = flow(id: id), let frame = Self.frame("flow", FlowSummary(flow)) else { continue }
                for feed in open { feed.pushFlow(frame) }
            }
        }
    }

    // MARK: flows

    /// Every kept flow, oldest first, with how many older ones gave way.
    func flows() -> (flows: [Flow], evicted: Int) {
        log.withLock { ($0.flows, $0.evicted) }
    }

    /// The flow numbered `id`, if still kept.
    func flow(id: Int) -> Flow? {
        log.withLock { $0.flow(id: id) }
    }

    /// The kept flows among `ids`, in list order.
    func flows(ids: Set<Int>) -> [Flow] {
        log.withLock { log in ids.sorted().compactMap { log.flow(id: $0) } }
    }

    /// Forgets the kept flows and tells every open page.
    func clear() {
        log.withLock { $0.clear() }
        // In line with the flow messages: those sent before the clear are cleared, later ones stay.
        let frame = ServerSentEvent.frame("cleared", "{}")
        for feed in feeds.withLock({ Array($0.values) }) { feed.pushFlow(frame) }
    }

    // MARK: feeds

    /// Adds an open page's feed.
    func attach(_ feed: WebFeed) {
        feeds.withLock { $0[ObjectIdentifier(feed)] = feed }
    }

    /// Removes a page's feed (its connection closed).
    func detach(_ feed: WebFeed) {
        _ = feeds.withLock { $0.removeValue(forKey: ObjectIdentifier(feed)) }
    }

    /// The feeds of open pages.
    func openFeeds() -> [WebFeed] { feeds.withLock { Array($0.values) } }

    /// Open pages.
    package var feedCount: Int { feeds.withLock { $0.count } }

    /// An event-stream message carrying `value` as JSON.
    static func frame(_ name: String, _ value: some Encodable) -> [UInt8]? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return nil }
        return ServerSentEvent.frame(name, String(decoding: data, as: UTF8.self))
    }
}
