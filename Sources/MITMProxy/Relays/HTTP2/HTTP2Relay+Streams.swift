import Foundation
import MITMCore
import MITMHTTP2

/// Bookkeeping shared by both sides: linking, resetting, answering and reporting streams.
extension HTTP2Relay {
    /// Resets a client stream on purpose.
    func resetClient(_ clientID: Int32, _ code: HTTP2ErrorCode) {
        requestedClientResets[clientID] = ()
        clientSession.reset(streamID: clientID, code: code)
        if let stream = streams[clientID] { advance(stream, .clientReset) }
    }

    /// Resets an upstream stream on purpose and detaches it from its client stream.
    func resetUpstream(_ upstreamID: Int32, _ code: HTTP2ErrorCode) {
        requestedUpstreamResets[upstreamID] = ()
        upstreamSession?.reset(streamID: upstreamID, code: code)
        detachUpstream(upstreamID)
    }

    /// Links a client stream to the upstream stream its request went to.
    func attachUpstream(_ clientID: Int32, _ upstreamID: Int32) {
        guard let stream = streams[clientID] else { return }
        clientStreamForUpstream[upstreamID] = clientID
        if case .impossible = advance(stream, .upstreamOpened(upstreamID)) { resetUpstream(upstreamID, .cancel) }
    }

    /// Forgets the link between an upstream stream and its client stream.
    func detachUpstream(_ upstreamID: Int32) {
        guard let clientID = clientStreamForUpstream.removeValue(forKey: upstreamID), let stream = streams[clientID]
        else { return }
        advance(stream, .upstreamDetached)
    }

    /// Feeds `event` to the stream's machine and returns its action; an impossible event ends the stream at once
    /// (RST_STREAM both ways), its record naming the event.
    @discardableResult
    func advance(_ stream: HTTP2RelayStream, _ event: HTTP2StreamMachine.Event) -> HTTP2StreamMachine.Action {
        let action = stream.machine.receive(event)
        if case .impossible(let what) = action {
            stream.fail("the proxy's HTTP/2 relay broke its own ordering: \(what.rawValue); reset the stream")
            if let upstreamID = stream.upstreamID { resetUpstream(upstreamID, .internalError) }
            resetClient(stream.clientID, .internalError)
        }
        return action
    }

    /// Answers a client stream with a response the proxy makes itself.
    func answerLocally(_ clientID: Int32, _ local: LocalResponse) {
        guard let stream = streams[clientID] else { return }
        let head = local.head(keepAlive: true)
        let body = stream.record.request.method == "HEAD" ? [] : local.body
        guard advance(stream, .answeredLocally(at: context.clock.wallNow(), ends: true)) == .sendToClient else {
            return
        }
        stream.record.response = HTTPResponseHead(
            version: .http2, status: head.status, reason: "",
            headers: HTTP2Heads.response(HTTP2Heads.fields(head)).headers)
        stream.record.responseBodyBytes = body.count
        stream.record.responseBody.append(body)
        if head.status >= 400 { stream.fail(local.reasonText) }
        do {
            try clientSession.submitResponse(streamID: clientID, HTTP2Heads.fields(head), endStream: body.isEmpty)
            clientSession.send(body, on: clientID)
            clientSession.finish(streamID: clientID)
        } catch {
            resetClient(clientID, .internalError)
        }
    }

    /// A record for a request that just arrived: HTTP/2.0, bodies captured as configured, and the
    /// upstream connection's setup costs if this is its first stream.
    func newRecord(_ head: HTTPRequestHead) -> ExchangeRecord {
        records.record(for: head, host: host, port: port, scheme: "https", version: .http2, at: context.clock.wallNow())
    }

    /// Reports a finished client stream (for a WebSocket's stream, the WebSocket's end).
    func report(_ stream: HTTP2RelayStream) {
        if let webSocket = stream.webSocket {
            webSocket.finish(reason: stream.failure ?? "the stream ended")
            return
        }
        context.events.emit(.exchange(stream.finishRecord(at: context.clock.wallNow())))
    }

    /// The upstream accepted a WebSocket on `clientID` (RFC 8441): the handshake is reported now, and its
    /// messages are read from the DATA that follows.
    func startWebSocket(_ clientID: Int32, _ handshake: WebSocketHandshake) {
        guard let stream = streams[clientID] else { return }
        let session = WebSocketSessionID(connectionID: connectionID, stream: clientID)
        stream.record.webSocket = session
        stream.webSocket = WebSocketTap(
            endpoint: WebSocketEndpoint(session: session, host: host, port: port, url: stream.record.url),
            handshake: handshake, captureLimit: context.configuration.webSocketCaptureLimit,
            events: context.events, clock: context.clock)
        context.events.emit(.exchange(stream.finishRecord(at: context.clock.wallNow())))
    }

    /// Offers the client extended CONNECT (RFC 8441) once the upstream connection offers it: only then can a
    /// WebSocket stream be relayed.
    func offerExtendedConnectIfUpstreamDoes() {
        guard let upstreamSession, upstreamSession.peerAcceptsExtendedConnect, !clientSession.acceptsExtendedConnect
        else { return }
        do {
            try clientSession.acceptExtendedConnect()
        } catch {
            context.events.emit(
                .upstreamFailed(
                    connectionID: connectionID, host: host, port: port,
                    reason: "cannot offer the client extended CONNECT: \(error.reason)"))
        }
    }
}
