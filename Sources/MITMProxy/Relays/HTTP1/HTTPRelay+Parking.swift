import MITMCore

/// An intercepted client between requests holds no upstream connection: its relay parks the idle upstream in the
/// loop's pool, as nginx's upstream keep-alive does, and takes one back (or has one opened) for the next request.
/// An idle client then costs one TLS connection, not two.
extension HTTPRelay {
    /// Parks the upstream when nothing is in flight on it, and gives back what the last exchange grew: the client's
    /// OpenSSL record buffers, the exchange and event queues' and the parsers' storage (1.6 KiB per idle client,
    /// measured with massif), and the rules' state when nothing is held or routed. Called once the client has been
    /// silent for `upstreamParkDelay`, not after every response: a client sending its next request at once would have
    /// the same buffers allocated again.
    func parkIdleUpstream() {
        guard !machine.isClosed, connecting == nil, exchanges.isEmpty, !machine.requestIsOpen,
            !machine.pauses.contains(.upstreamForClient)
        else { return }
        client.releaseIdleMemory()
        upstream?.releaseIdleMemory()
        defer { MemoryTrim.idleMemoryReleased() }
        rules.releaseAtRest()
        guard case .intercepted = mode else { return }
        offerUpstreamForReuse()
        exchanges = []
        if !hasQueuedClientEvents {
            queuedClientEvents = []
            queuedIndex = 0
        }
        clientParser.releaseIdleBuffer()
        responseParser.releaseIdleBuffer()
    }

    /// Whether the intercepted upstream is there for the next request; if it was parked, starts getting one back
    /// (the request waits in the queue, and the client's reads pause, until it is there).
    func retakeUpstream() -> Bool {
        if upstream != nil { return true }
        guard let owner, connecting == nil, exchanges.isEmpty else { return false }
        var answeredAtOnce: Result<ReadyUpstream, UpstreamFailure>?
        var waiting = false
        let attempt = owner.relayNeedsUpstream { [unowned self] result in
            guard waiting else {
                answeredAtOnce = result
                return
            }
            connecting = nil
            guard retook(result) else { return }
            processQueuedClientEvents()
        }
        switch answeredAtOnce {
        case .success(let ready)?:
            return retook(.success(ready))
        case .failure(let failure)?:
            // Failing the request goes through the queue being processed: do it in the next turn.
            nonisolated(unsafe) let relay = self
            loop.execute { _ = relay.retook(.failure(failure)) }
            return false
        case nil:
            waiting = true
            connecting = attempt
            return false
        }
    }

    /// Takes the upstream given back (or fails the waiting request with the reason there is none); whether the
    /// relay goes on.
    func retook(_ result: Result<ReadyUpstream, UpstreamFailure>) -> Bool {
        guard machine.isRelaying else {
            if case .success(let ready) = result { ready.leg.close() }
            return false
        }
        switch result {
        case .success(let ready):
            responseParser = HTTP1Parser(role: .response)
            if ready.timings.connect >= 0 { newConnectionTimings = ready.timings }
            attachUpstream(ready.leg)
            return true
        case .failure(let failure):
            failQueuedRequest(with: failure, scheme: "https")
            return false
        }
    }
}
