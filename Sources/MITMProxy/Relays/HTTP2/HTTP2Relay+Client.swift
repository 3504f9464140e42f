import Foundation
import MITMCore
import MITMHTTP2

/// The client side of the relay: requests, request bodies and what the client does to its streams.
extension HTTP2Relay {
    func handleClientEvent(_ event: HTTP2Event) {
        switch event {
        case .headers(let clientID, let block):
            switch block.kind {
            case .request:
                openStream(clientID, block)
            case .trailers:
                guard let stream = streams[clientID] else { return }
                let action = advance(stream, .requestEnded(at: context.clock.wallNow()))
                if action == .hold, holdRequestEnd(on: clientID, trailers: block.fields) { return }
                guard case .sendUpstream(let upstreamID) = action else { return }
                if block.exceedsLimit {
                    resetUpstream(upstreamID, .cancel)
                    refuseOversizedHeaders(clientID, what: "trailer section")
                    return
                }
                upstreamSession?.finish(streamID: upstreamID, trailers: block.fields)
            case .informational, .response:
                return
            }
        case .data(let clientID, let bytes):
            requestBody(bytes, on: clientID)
        case .endStream(let clientID):
            guard let stream = streams[clientID] else { return }
            stream.webSocket?.inputEnded(fromClient: true)
            let action = advance(stream, .requestEnded(at: context.clock.wallNow()))
            if action == .hold, holdRequestEnd(on: clientID) { return }
            guard case .sendUpstream(let upstreamID) = action else { return }
            upstreamSession?.finish(streamID: upstreamID)
        case .resetReceived(let clientID, let code):
            guard let stream = streams[clientID] else { return }
            if code != .noError || !stream.machine.responseEnded {
                stream.fail("the client reset the stream (\(code))")
            }
            if let upstreamID = stream.upstreamID { resetUpstream(upstreamID, code == .noError ? .cancel : code) }
            advance(stream, .clientReset)
        case .resetSent(let clientID, let code):
            guard requestedClientResets.removeValue(forKey: clientID) == nil, code != .noError else { return }
            let what = lastClientDiagnostic ?? "the client sent \(code.peerFault)"
            lastClientDiagnostic = nil
            context.events.emit(
                .badRequest(
                    connectionID: connectionID, peer: clientDescription,
                    reason: "HTTP/2 stream \(clientID): \(what); reset it with \(code)"))
            guard let stream = streams[clientID] else { return }
            stream.fail("\(what) (reset with \(code))")
            advance(stream, .clientReset)
        case .streamClosed(let clientID, let code):
            clientStreamClosed(clientID, code)
        case .dataSent(let clientID, let count):
            if feedFile(clientID) { return }
            guard let upstreamID = streams[clientID]?.upstreamID, !ruled.responseBodyEdited.contains(clientID) else {
                return
            }
            upstreamSession?.consume(streamID: upstreamID, count: count)
        case .goAwaySent(_, let code, let debug):
            guard code != .noError else { return }
            let what = debug.isEmpty ? lastClientDiagnostic ?? "the client sent \(code.peerFault)" : debug
            lastClientDiagnostic = nil
            context.events.emit(
                .badRequest(
                    connectionID: connectionID, peer: clientDescription,
                    reason: "HTTP/2 protocol error: \(what); sent GOAWAY \(code)"))
            finish("the client broke the HTTP/2 protocol (\(code))")
        case .goAwayReceived, .settingsReceived:
            return
        case .diagnostic(let text):
            lastClientDiagnostic = text
        }
    }

    /// A request head arrived: relay it upstream, or answer it when it cannot go there.
    private func openStream(_ clientID: Int32, _ block: HTTP2HeaderBlock) {
        let head = HTTP2Heads.request(block.fields)
        let stream = HTTP2RelayStream(
            clientID: clientID, record: newRecord(head), endStream: block.endStream,
            asksForWebSocket: HTTP2Heads.extendedConnectProtocol(block.fields)?.lowercased() == "websocket")
        streams[clientID] = stream
        context.events.emitRequest(
            .request(connectionID: connectionID, host: host, port: port, method: head.method, url: stream.record.url))
        if block.exceedsLimit {
            refuseOversizedHeaders(clientID, what: "header section")
            return
        }
        if originAuthority == nil,
            let refusal = TunnelRequestCheck.check(
                head, authority: block.fields.value(of: ":authority"), tunnelHost: host, port: port)
        {
            streams[clientID]?.fail(refusal.reason)
            answerLocally(clientID, .error(status: refusal.status, reason: refusal.reason))
            return
        }
        if applyRules(clientID, head, block) {
            if ruled.held[clientID] != nil { advance(stream, .held) }
            return
        }
        if let unreachableReason {
            answerLocally(clientID, .badGateway(host: host, port: port, reason: unreachableReason))
            return
        }
        guard life.upstreamAvailable, let upstreamConnection, upstreamConnection.isAvailable else {
            streams[clientID]?.fail("the upstream connection is going away (the client may retry on a new connection)")
            resetClient(clientID, .refusedStream)
            return
        }
        do {
            let upstreamID = try upstreamConnection.submitRequest(
                upstreamRequestFields(block.fields, clientID), endStream: block.endStream,
                for: self)
            attachUpstream(clientID, upstreamID)
        } catch {
            answerLocally(
                clientID, .badGateway(host: host, port: port, reason: "cannot open an HTTP/2 stream: \(error.reason)"))
        }
    }

    /// A request whose header or trailer section is over the limit gets a 431 (a reset once a response started).
    private func refuseOversizedHeaders(_ clientID: Int32, what: String) {
        let reason = "the request's \(what) is larger than \(Self.settings.maxHeaderListSize / 1024) KiB"
        streams[clientID]?.fail(reason)
        if streams[clientID]?.machine.responseStarted == true {
            resetClient(clientID, .cancel)
        } else {
            answerLocally(clientID, .error(status: 431, reason: reason))
        }
    }

    /// Request body bytes: queued upstream, where they leave as the upstream's window allows; the
    /// client's window reopens as they leave. Bytes nobody will read are consumed at once.
    private func requestBody(_ bytes: [UInt8], on clientID: Int32) {
        guard let stream = streams[clientID] else {
            clientSession.consume(streamID: clientID, count: bytes.count)
            return
        }
        let action = advance(stream, .requestBody)
        if case .impossible = action {
            clientSession.consume(streamID: clientID, count: bytes.count)
            return
        }
        stream.record.requestBodyBytes += bytes.count
        stream.record.requestBody.append(bytes)
        stream.webSocket?.observe(bytes, fromClient: true)
        if action == .hold, holdRequestBody(bytes, on: clientID) { return }
        if case .sendUpstream(let upstreamID) = action, let upstreamSession {
            upstreamSession.send(bytes, on: upstreamID)
        } else {
            clientSession.consume(streamID: clientID, count: bytes.count)
        }
    }

    private func clientStreamClosed(_ clientID: Int32, _ code: HTTP2ErrorCode) {
        requestedClientResets.removeValue(forKey: clientID)
        forgetRules(clientID)
        guard let stream = streams.removeValue(forKey: clientID) else { return }
        if let upstreamID = stream.upstreamID, code != .noError {
            resetUpstream(upstreamID, .cancel)
        } else if let upstreamID = stream.upstreamID {
            // Both directions ended toward the client; the upstream stream closes on its own.
            clientStreamForUpstream[upstreamID] = nil
        }
        if code != .noError { stream.fail("the stream was reset (\(code))") }
        if stream.record.response == nil { stream.fail("no response") }
        report(stream)
    }
}
