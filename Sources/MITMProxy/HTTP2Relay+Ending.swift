import MITMHTTP2

/// How the relay ends: gracefully (GOAWAY both ways, then wait for the peers to hang up) or at once.
extension HTTP2Relay {
    /// Ends the connection gracefully: streams still open fail with `reason`, GOAWAY goes to each side
    /// still listening, then close_notify and FIN; the relay closes when both peers have hung up (or
    /// the connection's linger deadline passes).
    func finish(_ reason: String) {
        guard !finishing, !closed else { return }
        finishing = true
        finishReason = reason
        failRemainingStreams(reason)
        if !clientInputEnded && clientSession.wantsRead { clientSession.goAway() }
        if !upstreamInputEnded, let upstreamSession, upstreamSession.wantsRead { upstreamSession.goAway() }
        _ = write(clientSession, to: client, ignoringHighWater: true)
        if let upstreamSession, let upstream { _ = write(upstreamSession, to: upstream, ignoringHighWater: true) }
        client.finishWriting()
        upstream?.finishWriting()
        if bothInputsEnded {
            close(reason: reason)
            return
        }
        client.resumeReading()
        upstream?.resumeReading()
        owner?.relayLingering()
    }

    var bothInputsEnded: Bool { clientInputEnded && (upstream == nil || upstreamInputEnded) }

    func linger(_ event: LegEvent, fromClient: Bool) {
        switch event {
        case .data, .drained:
            return
        case .endOfInput, .failed:
            if fromClient { clientInputEnded = true } else { upstreamInputEnded = true }
            if bothInputsEnded { close(reason: finishReason) }
        }
    }

    func failRemainingStreams(_ reason: String) {
        for (upstreamID, _) in clientStreamForUpstream {
            upstreamSession?.reset(streamID: upstreamID, code: .cancel)
        }
        clientStreamForUpstream.removeAll()
        for var stream in streams.values.sorted(by: { $0.clientID < $1.clientID }) {
            // RST_STREAM(CANCEL) tells the client this stream is lost, which a GOAWAY naming it as processed does not.
            if clientSession.isOpen(streamID: stream.clientID) { clientSession.reset(streamID: stream.clientID, code: .cancel) }
            stream.fail(reason)
            report(stream)
        }
        streams.removeAll()
    }

    /// Closes both legs now (after a best-effort GOAWAY to each side).
    func close(reason: String) {
        guard !closed else { return }
        let graceful = !finishing
        finishing = true
        if graceful {
            if clientSession.wantsRead { clientSession.goAway() }
            if let upstreamSession, upstreamSession.wantsRead { upstreamSession.goAway() }
            failRemainingStreams(reason)
            _ = write(clientSession, to: client, ignoringHighWater: true)
            if let upstreamSession, let upstream { _ = write(upstreamSession, to: upstream, ignoringHighWater: true) }
        }
        guard !closed else { return }
        closed = true
        client.onEvent = nil
        upstream?.onEvent = nil
        client.close()
        upstream?.close()
        let owner = owner
        self.owner = nil
        owner?.relayClosed(reason: reason)
    }
}
