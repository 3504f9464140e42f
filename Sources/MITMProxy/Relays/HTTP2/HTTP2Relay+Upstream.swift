import Foundation
import MITMCore
import MITMHTTP2

/// The upstream side of the relay: responses, response bodies and what the upstream does to its streams.
extension HTTP2Relay {
    /// The upstream connection pumps every relay it handed an event to (`pump` reports the streams' activity).
    func handleUpstreamEvent(_ event: HTTP2Event) {
        if event.movesAStream { streamsMoved = true }
        switch event {
        case .headers(let upstreamID, let block):
            responseHeaders(block, on: upstreamID)
        case .data(let upstreamID, let bytes):
            guard let clientID = clientStreamForUpstream[upstreamID], let stream = streams[clientID] else {
                upstreamSession?.consume(streamID: upstreamID, count: bytes.count)
                return
            }
            if holdResponseBody(bytes, on: clientID) { return }
            if dropsResponseBody(clientID) {
                upstreamSession?.consume(streamID: upstreamID, count: bytes.count)
                return
            }
            guard advance(stream, .responseBody) == .sendToClient else {
                upstreamSession?.consume(streamID: upstreamID, count: bytes.count)
                return
            }
            stream.record.responseBodyBytes += bytes.count
            stream.record.responseBody.append(bytes)
            stream.webSocket?.observe(bytes, fromClient: false)
            clientSession.send(bytes, on: clientID)
        case .endStream(let upstreamID):
            guard let clientID = clientStreamForUpstream[upstreamID], let stream = streams[clientID] else { return }
            if holdResponseEnd(on: clientID) { return }
            guard ruledResponse(.responseEnded, on: clientID) != nil,
                advance(stream, .responseEnded) == .sendToClient
            else { return }
            stream.webSocket?.inputEnded(fromClient: false)
            clientSession.finish(streamID: clientID)
        case .resetReceived(let upstreamID, let code):
            guard let clientID = clientStreamForUpstream[upstreamID], let stream = streams[clientID] else { return }
            detachUpstream(upstreamID)
            // RST_STREAM(NO_ERROR) after a complete response only asks the client to stop sending.
            if code == .noError && stream.machine.responseEnded { return }
            streams[clientID]?.fail("the upstream reset the stream (\(code))")
            resetClient(clientID, code)
        case .resetSent(let upstreamID, let code):
            guard requestedUpstreamResets.removeValue(forKey: upstreamID) == nil, code != .noError else { return }
            let what = upstreamConnection?.takeDiagnostic() ?? "it sent \(code.peerFault)"
            context.events.emit(
                .upstreamFailed(
                    connectionID: connectionID, host: host, port: port,
                    reason: "HTTP/2 stream \(upstreamID): \(what); reset it with \(code)"))
            guard let clientID = clientStreamForUpstream[upstreamID] else { return }
            detachUpstream(upstreamID)
            upstreamStreamFailed(clientID, code: nil, reason: "the upstream broke HTTP/2: \(what)")
        case .streamClosed(let upstreamID, let code):
            requestedUpstreamResets.removeValue(forKey: upstreamID)
            guard let clientID = clientStreamForUpstream[upstreamID] else { return }
            detachUpstream(upstreamID)
            guard code != .noError else { return }
            upstreamStreamFailed(
                clientID, code: code,
                reason: code == .refusedStream
                    ? "the upstream did not process the stream (REFUSED_STREAM)"
                    : "the upstream stream closed with \(code)")
        case .dataSent(let upstreamID, let count):
            guard let clientID = clientStreamForUpstream[upstreamID], !ruled.requestBodyEdited.contains(clientID) else {
                return
            }
            clientSession.consume(streamID: clientID, count: count)
        case .goAwayReceived(_, let code, let debug):
            perform(life.receive(.upstreamWentAway))
            if code != .noError {
                context.events.emit(
                    .upstreamFailed(
                        connectionID: connectionID, host: host, port: port,
                        reason: "sent GOAWAY \(code)\(debug.isEmpty ? "" : ": \(debug)")"))
            }
        case .goAwaySent(_, let code, let debug):
            guard code != .noError else { return }
            let diagnostic = upstreamConnection?.takeDiagnostic()
            let what = debug.isEmpty ? diagnostic ?? "it sent \(code.peerFault)" : debug
            upstreamLost("broke the HTTP/2 protocol: \(what); sent GOAWAY \(code)")
        case .settingsReceived:
            offerExtendedConnectIfUpstreamDoes()
        case .diagnostic:
            return
        }
    }

    private func responseHeaders(_ block: HTTP2HeaderBlock, on upstreamID: Int32) {
        guard let clientID = clientStreamForUpstream[upstreamID], streams[clientID] != nil else {
            // A stream the relay never opened (a push that raced the SETTINGS) or one it gave up on.
            resetUpstream(upstreamID, .refusedStream)
            return
        }
        if block.exceedsLimit {
            resetUpstream(upstreamID, .cancel)
            let limit = Self.settings.maxHeaderListSize / 1024
            upstreamStreamFailed(
                clientID, code: nil, reason: "the upstream's header section is larger than \(limit) KiB")
            return
        }
        switch block.kind {
        case .informational:
            try? clientSession.submitInformational(streamID: clientID, block.fields)
        case .response:
            if pauseAtResponseBreakpoint(clientID, block) { return }
            relayResponse(block.fields, on: clientID, endStream: block.endStream)
        case .trailers:
            if holdResponseEnd(on: clientID, trailers: block.fields) { return }
            guard ruledResponse(.responseEnded, on: clientID) != nil, let stream = streams[clientID],
                advance(stream, .responseEnded) == .sendToClient
            else { return }
            stream.record.responseTrailers = HTTP2Heads.response(block.fields).headers
            clientSession.finish(streamID: clientID, trailers: block.fields)
        case .request:
            return
        }
    }

    /// Relays a response head to the client (as the upstream sent it, or as the web UI edited it at a breakpoint,
    /// perhaps with a `replacement` body); whether it went.
    @discardableResult
    func relayResponse(_ fields: [HTTP2HeaderField], on clientID: Int32, endStream: Bool, replacement: [UInt8]? = nil)
        -> Bool
    {
        guard let stream = streams[clientID] else { return false }
        var relayed = ruledResponseFields(fields, clientID, endStream: endStream)
        if let replacement {
            relayed.body = stream.record.request.method == "HEAD" ? [] : replacement
            relayed.fields =
                relayed.fields.filter { $0.nameText != "content-length" }
                + [HTTP2HeaderField("content-length", String(replacement.count))]
            ruled.replacedAtBreakpoint.insert(clientID)
        }
        let endsWithHead = endStream && relayed.body == nil
        guard advance(stream, .responseHead(at: context.clock.wallNow(), ends: endsWithHead)) == .sendToClient else {
            return false
        }
        stream.record.response = HTTP2Heads.response(relayed.fields)
        if !endsWithHead, stream.record.responseBody.hasRoom, stream.record.request.method != "HEAD",
            let announced = stream.record.response?.headers.first("content-length")
        {
            stream.record.responseBody.expect(size: Int(announced))
        }
        do {
            try clientSession.submitResponse(streamID: clientID, relayed.fields, endStream: endsWithHead)
            afterRuledResponse(clientID, body: relayed.body, upstreamEnded: endStream)
            if stream.asksForWebSocket, let response = stream.record.response,
                let handshake = WebSocketHandshake.extendedConnect(status: response.status, headers: response.headers)
            {
                startWebSocket(clientID, handshake)
            }
            return true
        } catch {
            stream.fail("cannot relay the response: \(error.reason)")
            if let upstreamID = stream.upstreamID { resetUpstream(upstreamID, .cancel) }
            resetClient(clientID, .internalError)
            return false
        }
    }

    /// The upstream side of a stream failed: the client gets a 502 if no response started, a reset
    /// otherwise (REFUSED_STREAM stays REFUSED_STREAM, so the client knows it may retry).
    func upstreamStreamFailed(_ clientID: Int32, code: HTTP2ErrorCode?, reason: String) {
        guard let stream = streams[clientID] else { return }
        stream.fail(reason)
        if code == .refusedStream && !stream.machine.responseStarted {
            resetClient(clientID, .refusedStream)
        } else if !stream.machine.responseStarted {
            answerLocally(clientID, .badGateway(host: host, port: port, reason: reason))
        } else if !stream.machine.responseEnded {
            resetClient(clientID, .internalError)
        }
    }
}
