import Foundation
import MITMCore
import MITMIO

/// The upstream side of the HTTP/1 relay: responses parsed and relayed in order, 1xx, upgrades,
/// upstream closes and failures, and handing an idle upstream back for reuse.
extension HTTPRelay {
    func attachUpstream(_ leg: Leg) {
        upstream = leg
        leg.onEvent = { [unowned self] event in self.upstreamEvent(event) }
        leg.resumeReading()
    }

    func upstreamEvent(_ event: LegEvent) {
        client.cork()
        defer { client.uncork() }
        onActivity?()
        switch event {
        case .data(let bytes):
            do {
                handleResponseEvents(try responseParser.feed(Array(bytes)))
            } catch {
                upstreamBroke("sent a malformed response: \(error.reason)")
            }
        case .endOfInput:
            do {
                handleResponseEvents(try responseParser.finish())
            } catch {
                upstreamBroke("closed the connection in the middle of a response")
                return
            }
            upstreamEnded()
        case .failed(let reason): upstreamBroke(reason)
        case .drained:
            if clientPausedForUpstream {
                clientPausedForUpstream = false
                if !clientPausedForQueue { client.resumeReading() }
            }
        }
    }

    func handleResponseEvents(_ events: [HTTP1Event]) {
        for event in events where !closed {
            switch event {
            case .responseHead(let head): responseHead(head)
            case .body(let bytes):
                guard !exchanges.isEmpty else { continue }
                exchanges[0].record.responseBodyBytes += bytes.count
                exchanges[0].record.responseBody.append(bytes)
                client.write(responseChunked ? HTTP1Chunked.encodeChunk(bytes) : bytes)
                if client.bufferedOutputBytes > Self.highWater && !upstreamPausedForClient {
                    upstreamPausedForClient = true
                    upstream?.pauseReading()
                }
            case .end(let trailers): responseEnded(trailers: trailers)
            case .requestHead: continue
            }
        }
    }

    func responseHead(_ head: HTTPResponseHead) {
        guard !exchanges.isEmpty else {
            upstreamBroke("sent a response nobody asked for")
            return
        }
        client.write(head.serialized())
        if head.status >= 100 && head.status < 200 && head.status != 101 { return }
        exchanges[0].record.response = head
        exchanges[0].responseStarted = Date()
        responseHeadSent = true
        responseChunked = head.headers.tokens("transfer-encoding").last == "chunked"
        if exchanges[0].upgradeRequested && head.status != 101 && clientParser.isPaused {
            do {
                queuedClientEvents.append(contentsOf: try clientParser.resume())
            } catch {
                rejectClient(error)
            }
        }
    }

    func responseEnded(trailers: HTTPHeaders?) {
        guard !exchanges.isEmpty else { return }
        let response = exchanges[0].record.response
        guard let response else { return }  // the end of a 1xx
        if responseChunked { client.write(HTTP1Chunked.lastChunk(trailers: trailers)) }
        var finished = exchanges.removeFirst()
        finished.record.responseTrailers = trailers
        finished.complete(at: Date())
        responseHeadSent = false
        context.events.emit(.exchange(finished.record))
        if response.status == 101 {
            upgrade()
            return
        }
        let closeDelimited = !responseChunked && response.headers.first("content-length") == nil
            && finished.record.request.method != "HEAD" && response.status != 204 && response.status != 304
        if closeDelimited || !response.keepAlive || !finished.record.request.keepAlive {
            closeAfterFlush()
            return
        }
        sendLocalResponses()
        if exchanges.isEmpty {
            becameIdle()
            if clientEnded && !requestOpen { closeAfterFlush() }
            processQueuedClientEvents()
        }
    }

    func upgrade() {
        guard let upstream else { return }
        // The request parser paused after the Upgrade request, so every later client byte is still buffered there.
        let up = clientParser.takeBufferedBytes()
        let down = responseParser.takeBufferedBytes()
        client.onEvent = nil
        upstream.onEvent = nil
        let raw = RawRelay(client: client, upstream: upstream)
        closed = true
        onUpgrade?(raw)
        raw.start(initialUp: up, initialDown: down)
    }

    /// Hands an idle, healthy intercepted upstream to the owner for reuse instead of closing it.
    func offerUpstreamForReuse() {
        guard case .intercepted = mode, let upstream, let reuse = onUpstreamReusable, !closing, !upstreamEndedInput,
              responseParser.isIdle, upstream.bufferedOutputBytes == 0 else { return }
        upstream.onEvent = nil
        self.upstream = nil
        reuse(upstream)
    }

    func upstreamEnded() {
        upstreamEndedInput = true
        if exchanges.contains(where: { $0.local == nil }) {
            upstreamBroke("closed the connection before responding")
            return
        }
        switch mode {
        case .plain:
            upstream?.close()
            upstream = nil
            upstreamTarget = nil
            responseParser = HTTP1Parser(role: .response)
        case .intercepted, .failing:
            closeAfterFlush()
        }
    }

    func upstreamBroke(_ reason: String) {
        let target = upstreamTarget.map { "\($0.host):\($0.port)" } ?? "upstream"
        guard let first = exchanges.first, first.local == nil else {
            close(reason: "upstream \(target) \(reason)")
            return
        }
        if responseHeadSent {
            var record = first.record
            record.failure = "upstream \(reason)"
            record.finished = Date()
            context.events.emit(.exchange(record))
            close(reason: "upstream \(target) \(reason) (response truncated)")
            return
        }
        let host = upstreamTarget?.host ?? first.record.host
        let port = upstreamTarget?.port ?? first.record.port
        context.events.emit(.upstreamFailed(connectionID: connectionID, host: host, port: port, reason: reason))
        let local = LocalResponse.badGateway(host: host, port: port, reason: reason)
        var record = first.record
        let head = local.head(keepAlive: false)
        record.response = head
        record.finished = Date()
        record.failure = "upstream \(reason)"
        context.events.emit(.exchange(record))
        exchanges.removeAll()
        client.write(head.serialized() + local.body)
        upstream?.close()
        closeAfterFlush()
    }
}
