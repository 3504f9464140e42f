import Foundation
import MITMCore
import MITMIO

/// The upstream side of the HTTP/1 relay: responses parsed and relayed in order, 1xx, upgrades,
/// upstream closes and failures, and handing an idle upstream back for reuse.
extension HTTPRelay {
    func attachUpstream(_ leg: Leg) {
        upstream = leg
        perform(machine.receive(.upstreamAttached))
        leg.onEvent = { [unowned self] event in self.upstreamEvent(event) }
        leg.resumeReading()
    }

    func upstreamEvent(_ event: LegEvent) {
        client.cork()
        defer { client.uncork() }
        owner?.relayActivity(headDeadline: headDeadline)
        switch event {
        case .data(let bytes):
            if rules.heldResponse != nil {
                holdResponseBytes(UnsafeRawBufferPointer(rebasing: bytes[...]))
                return
            }
            let direct = min(Self.directBodyBytes(of: &responseParser), bytes.count)
            if direct > 0 {
                relayResponseBody(UnsafeRawBufferPointer(rebasing: bytes[..<direct]))
                handleResponseEvents(responseParser.skipBody(direct))
            }
            guard direct < bytes.count, !machine.isClosed else { return }
            do {
                handleResponseEvents(try responseParser.feed(UnsafeRawBufferPointer(rebasing: bytes[direct...])))
            } catch {
                upstreamBroke("sent a malformed response: \(error.reason)")
            }
        case .endOfInput:
            if rules.heldResponse != nil {
                holdResponseEnd()
                return
            }
            do {
                handleResponseEvents(try responseParser.finish())
            } catch {
                upstreamBroke("closed the connection in the middle of a response")
                return
            }
            upstreamEnded()
        case .failed(let reason):
            endResponseBreakpoint()
            upstreamBroke(reason)
        case .drained:
            perform(machine.receive(.upstreamDrained))
        }
    }

    func handleResponseEvents(_ events: [HTTP1Event]) {
        let source = upstream
        for event in events where !machine.isClosed && upstream === source {
            if rules.heldResponse != nil {
                holdResponseEvent(event)
                continue
            }
            switch event {
            case .responseHead(let head, let framing): responseHead(head, framing: framing)
            case .body(let bytes):
                let write = machine.receive(.responseBody)
                guard !exchanges.isEmpty, write == .forward || write == .forwardAsChunk else {
                    perform(write)
                    continue
                }
                exchanges[0].record.responseBodyBytes += bytes.count
                exchanges[0].record.responseBody.append(bytes)
                client.write(write == .forwardAsChunk ? HTTP1Chunked.encodeChunk(bytes) : bytes)
                pauseUpstreamIfClientIsFull()
            case .end(let trailers): responseEnded(trailers: trailers)
            case .requestHead: continue
            }
        }
        if rules.heldResponse != nil { heldResponseRead() }
    }

    /// Body bytes of a Content-Length or close-delimited response, relayed from the upstream's read without a copy.
    func relayResponseBody(_ bytes: UnsafeRawBufferPointer) {
        let write = machine.receive(.responseBody)
        guard !exchanges.isEmpty else { return }
        guard write == .forward else {
            perform(write)
            return
        }
        exchanges[0].record.responseBodyBytes += bytes.count
        exchanges[0].record.responseBody.append(bytes)
        client.write(bytes)
        pauseUpstreamIfClientIsFull()
    }

    func pauseUpstreamIfClientIsFull() {
        if client.outputRoom(below: Self.highWater) < 0 { perform(machine.receive(.clientFull)) }
    }

    func responseHead(_ head: HTTPResponseHead, framing: HTTP1BodyFraming) {
        if pauseAtResponseBreakpoint(head, framing: framing) { return }
        relayResponseHead(head, framing: framing, upstreamStatus: head.status)
    }

    /// Relays a response head (`head` as the upstream sent it with `upstreamStatus`, or as the web UI edited it at a
    /// breakpoint, perhaps with a `replacementBody`).
    func relayResponseHead(
        _ head: HTTPResponseHead, framing: HTTP1BodyFraming, upstreamStatus: Int,
        replacementBody replacement: [UInt8]? = nil
    ) {
        let awaited: HTTP1RelayMachine.AwaitedResponse =
            switch exchanges.first {
            case let first? where first.local == nil: first.upgradeRequested ? .responseOrUpgrade : .response
            default: .nothing
            }
        let relaying = machine.receive(.responseHead(status: upstreamStatus, framing: framing, awaited: awaited))
        if case .refuseResponse(let refusal) = relaying {
            upstreamBroke(refusal.rawValue)
            return
        }
        guard relaying == .relayHead || relaying == .relayInterimHead else {
            perform(relaying)
            return
        }
        let first = exchanges[0]
        var relayed = ruledResponseHead(HopByHopFields.forwarding(head))
        var editedBody: [UInt8]?
        if let replacement, relaying == .relayHead {
            relayed.headers.remove("Transfer-Encoding")
            relayed.headers.replaceOrAdd(name: "Content-Length", value: String(replacement.count))
            perform(machine.receive(.responseBodyReplaced))
            editedBody = first.record.request.method == "HEAD" ? [] : replacement
        }
        if !first.clientKeepsAlive && head.status >= 200 && head.status != 101 {
            relayed.headers.replaceOrAdd(name: "Connection", value: "close")
        }
        client.write(relayed.bytes(forwarding: head))
        // A failed write closes the relay from inside `write`.
        guard !machine.isClosed, !exchanges.isEmpty, relaying == .relayHead else { return }
        if relayed.status != upstreamStatus {
            perform(
                machine.receive(.responseStatusRewritten(relayed, requestMethod: exchanges[0].record.request.method)))
        }
        exchanges[0].record.response = relayed.status == head.status && machine.response != .replaced ? head : relayed
        exchanges[0].record.response?.parsedFrom = nil
        exchanges[0].responseStarted = context.clock.wallNow()
        if editedBody == nil, case .contentLength(let length) = framing, exchanges[0].record.responseBody.hasRoom,
            first.record.request.method != "HEAD"
        {
            exchanges[0].record.responseBody.expect(size: length)
        }
        if let editedBody {
            exchanges[0].record.responseBodyBytes += editedBody.count
            exchanges[0].record.responseBody.append(editedBody)
            client.write(editedBody)
        }
        guard afterRuledResponseHead(bodyEditedAtBreakpoint: editedBody != nil) else { return }
        if exchanges[0].upgradeRequested && head.status != 101 && clientParser.isPaused {
            do {
                queuedClientEvents.append(contentsOf: try clientParser.resume())
            } catch {
                rejectClient(error)
            }
        }
    }

    func responseEnded(trailers: HTTPHeaders?) {
        guard let first = exchanges.first else { return }
        let upstreamKeepsAlive = first.record.response?.keepAlive ?? true
        let ending = machine.receive(
            .responseEnd(upstreamKeepsAlive: upstreamKeepsAlive, clientKeepsAlive: first.clientKeepsAlive))
        let next: HTTP1RelayMachine.AfterResponse
        switch ending {
        case .endChunkedResponse(let then):
            client.write(HTTP1Chunked.lastChunk(trailers: trailers))
            next = then
        case .endResponse(let then):
            next = then
        default:
            perform(ending)  // nothing after the end of a 1xx
            return
        }
        if first.ruled != nil, firstExchangeRuledActions(.responseEnded) == nil { return }
        guard let response = first.record.response else { return }
        let finished = exchanges.removeFirst()
        finished.record.responseTrailers = trailers
        finished.complete(at: context.clock.wallNow())
        let webSocket =
            response.status == 101
            ? WebSocketHandshake.http1(request: finished.record.request, response: response) : nil
        if webSocket != nil { finished.record.webSocket = WebSocketSessionID(connectionID: connectionID) }
        context.events.emit(.exchange(finished.record))
        switch next {
        case .upgrade:
            upgrade(
                tap: webSocket.map { handshake in
                    let endpoint = WebSocketEndpoint(
                        session: WebSocketSessionID(connectionID: connectionID), host: finished.record.host,
                        port: finished.record.port, url: finished.record.url)
                    return WebSocketTap(
                        endpoint: endpoint, handshake: handshake,
                        captureLimit: context.configuration.webSocketCaptureLimit, events: context.events,
                        clock: context.clock)
                })
        case .closeBoth:
            closeAfterFlush()
        case .closeClientKeepingUpstream:
            closeClientKeepingUpstream()
        case .nextExchange:
            // With nothing queued the relay is idle once: `sendLocalResponses` would make it so, and so would the
            // line after it (each time a call into OpenSSL to give back the upstream's buffers).
            if exchanges.isEmpty {
                becameIdle()
            } else {
                sendLocalResponses()
                guard exchanges.isEmpty else { return }
                becameIdle()
            }
            if machine.clientIsDone { closeClientKeepingUpstream() }
            processQueuedClientEvents()
        }
    }

    /// Ends the client's connection after what is queued for it, and parks the upstream when its last response was
    /// complete and it allows reuse: persistence is per hop (RFC 9112 §9.3), as nginx keeps its upstream whatever
    /// the client says.
    func closeClientKeepingUpstream() {
        if exchanges.isEmpty && !machine.requestIsOpen { offerUpstreamForReuse() }
        closeAfterFlush()
    }

    /// Hands the connection to a raw relay after `101`; `tap` reads the messages of a WebSocket.
    func upgrade(tap: WebSocketTap?) {
        guard let upstream else { return }
        let upgrading = machine.receive(.upgraded)
        guard upgrading == .none else {
            perform(upgrading)
            return
        }
        // The request parser paused after the Upgrade request, so every later client byte is still buffered there.
        let up = clientParser.takeBufferedBytes()
        let down = responseParser.takeBufferedBytes()
        client.onEvent = nil
        upstream.onEvent = nil
        let raw = RawRelay(client: client, upstream: upstream, tap: tap)
        owner?.relayUpgraded(to: raw)
        raw.start(initialUp: up, initialDown: down)
    }

    /// Hands an idle, healthy intercepted upstream to the owner for reuse instead of closing it.
    func offerUpstreamForReuse() {
        guard case .intercepted = mode, rules.route == nil, let upstream, let owner, !machine.isLingering,
            machine.upstreamInputIsOpen,
            responseParser.isIdle, upstream.bufferedOutputBytes == 0
        else { return }
        upstream.onEvent = nil
        self.upstream = nil
        owner.relayReleasedUpstream(upstream)
    }

    func upstreamEnded() {
        perform(machine.receive(.upstreamInputEnded))
        if exchanges.contains(where: { $0.local == nil }) {
            upstreamBroke("closed the connection before responding")
            return
        }
        switch mode {
        case .intercepted where rules.route != nil, .plain:
            upstream?.close()
            upstream = nil
            upstreamTarget = nil
            responseParser = HTTP1Parser(role: .response)
        case .intercepted, .failing:
            closeAfterFlush()
        }
    }

    /// The connection's idle deadline passed. When a request is still waiting for its response head, the client
    /// gets a 504 naming the upstream instead of a silent close; returns whether it did.
    func answerTimeout(after wait: Duration) -> Bool {
        guard machine.isRelaying, let first = exchanges.first, first.local == nil, !machine.responseHeadSent else {
            return false
        }
        upstreamBroke("did not answer within \(SecondsText.format(wait))", status: 504)
        return true
    }

    func upstreamBroke(_ reason: String) {
        upstreamBroke(reason, status: 502)
    }

    func upstreamBroke(_ reason: String, status: Int) {
        let target = upstreamTarget.map { "\($0.host):\($0.port)" } ?? "upstream"
        if exchanges.isEmpty && !machine.requestIsOpen, let upstreamTarget {
            // Nothing is waiting for this upstream: drop it, and keep the client for its next request.
            context.events.emit(
                .upstreamFailed(
                    connectionID: connectionID, host: upstreamTarget.host, port: upstreamTarget.port, reason: reason))
            upstreamEnded()
            return
        }
        guard let first = exchanges.first, first.local == nil else {
            close(reason: "upstream \(target) \(reason)")
            return
        }
        if machine.responseHeadSent {
            var record = first.record
            record.failure = "upstream \(reason)"
            record.finished = context.clock.wallNow()
            context.events.emit(.exchange(record))
            // Recorded once: `close` records only the exchanges still waiting behind it.
            exchanges.removeFirst()
            close(reason: "upstream \(target) \(reason) (response truncated)")
            return
        }
        let host = upstreamTarget?.host ?? first.record.host
        let port = upstreamTarget?.port ?? first.record.port
        context.events.emit(.upstreamFailed(connectionID: connectionID, host: host, port: port, reason: reason))
        let local =
            status == 504
            ? LocalResponse.gatewayTimeout(host: host, port: port, reason: reason)
            : LocalResponse.badGateway(host: host, port: port, reason: reason)
        var record = first.record
        let head = local.head(keepAlive: false)
        record.response = head
        record.finished = context.clock.wallNow()
        record.failure = "upstream \(reason)"
        context.events.emit(.exchange(record))
        exchanges.removeAll()
        client.write(head.serialized() + local.body)
        upstream?.close()
        closeAfterFlush()
    }
}
