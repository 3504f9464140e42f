import MITMHTTP2

/// How the relay ends: gracefully (GOAWAY to the client, then wait for it to hang up) or at once. The upstream
/// connection is not the relay's to end: it only leaves it.
extension HTTP2Relay {
    /// Ends the client connection gracefully: streams still open fail with `reason` (their upstream twins are
    /// reset), GOAWAY goes to the client if it still listens, then close_notify and FIN; the relay closes when the
    /// client has hung up (or the connection's linger deadline passes).
    func finish(_ reason: String) {
        guard !finishing, !closed else { return }
        finishing = true
        finishReason = reason
        failRemainingStreams(reason)
        leaveUpstream()
        if !clientInputEnded && clientSession.wantsRead { clientSession.goAway() }
        _ = write(clientSession, to: client, ignoringHighWater: true)
        client.finishWriting()
        if clientInputEnded {
            close(reason: reason)
            return
        }
        client.resumeReading()
        owner?.relayLingering()
    }

    func linger(_ event: LegEvent) {
        switch event {
        case .data, .drained:
            return
        case .endOfInput, .failed:
            clientInputEnded = true
            close(reason: finishReason)
        }
    }

    /// Resets the upstream streams still open (their RST_STREAM frames leave at once) and lets the upstream
    /// connection go on without this relay.
    func failRemainingStreams(_ reason: String) {
        for (upstreamID, _) in clientStreamForUpstream {
            upstreamSession?.reset(streamID: upstreamID, code: .cancel)
        }
        clientStreamForUpstream.removeAll()
        for stream in streams.values.sorted(by: { $0.clientID < $1.clientID }) {
            // RST_STREAM(CANCEL) tells the client this stream is lost, which a GOAWAY naming it as processed does not.
            if clientSession.isOpen(streamID: stream.clientID) {
                clientSession.reset(streamID: stream.clientID, code: .cancel)
            }
            stream.fail(reason)
            report(stream)
        }
        streams.removeAll()
    }

    /// Stops using the upstream connection, which stays for other client connections (or idles in the pool).
    func leaveUpstream() {
        upstreamConnection?.detach(self)
    }

    /// Closes the client leg now (after a best-effort GOAWAY) and leaves the upstream connection.
    func close(reason: String) {
        guard !closed else { return }
        for clientID in Array(ruled.breakpoints.keys) { endBreakpoint(clientID) }
        let graceful = !finishing
        finishing = true
        if graceful {
            if clientSession.wantsRead { clientSession.goAway() }
            failRemainingStreams(reason)
            leaveUpstream()
            _ = write(clientSession, to: client, ignoringHighWater: true)
        }
        guard !closed else { return }
        closed = true
        client.onEvent = nil
        client.close()
        let owner = owner
        self.owner = nil
        owner?.relayClosed(reason: reason)
    }
}
