import MITMHTTP2

/// How the relay ends: gracefully (GOAWAY to the client, then wait for it to hang up) or at once. The upstream
/// connection is not the relay's to end: it only leaves it.
extension HTTP2Relay {
    /// Ends the client connection gracefully: streams still open fail with `reason` (their upstream twins are
    /// reset), GOAWAY goes to the client if it still listens, then close_notify and FIN; the relay closes when the
    /// client has hung up (or the connection's linger deadline passes). `clientGone`: the client's input ended.
    func finish(_ reason: String, clientGone: Bool = false) {
        perform(life.receive(.finish(reason: reason, clientGone: clientGone)))
    }

    /// Closes the client leg now (after a best-effort GOAWAY) and leaves the upstream connection.
    func close(reason: String) {
        perform(life.receive(.close(reason: reason)))
    }

    func perform(_ actions: [HTTP2RelayLife.Action]) {
        for action in actions {
            switch action {
            case .goAwayToClient:
                if clientSession.wantsRead { clientSession.goAway() }
            case .sayGoodbye(let reason, let goAway):
                writeGoodbye(reason, goAway: goAway)
                client.finishWriting()
            case .awaitHangUp:
                client.resumeReading()
                owner?.relayLingering()
            case .close(let reason, let goodbyeFirst):
                for clientID in Array(ruled.breakpoints.keys) { endBreakpoint(clientID) }
                if goodbyeFirst { writeGoodbye(reason, goAway: true) }
                client.onEvent = nil
                client.close()
                let owner = owner
                self.owner = nil
                owner?.relayClosed(reason: reason)
            }
        }
    }

    /// Resets the streams still open, leaves the upstream, says GOAWAY if asked and the client still listens, and
    /// writes it all out past the high-water mark.
    private func writeGoodbye(_ reason: String, goAway: Bool) {
        failRemainingStreams(reason)
        leaveUpstream()
        if goAway && clientSession.wantsRead { clientSession.goAway() }
        _ = write(clientSession, to: client, ignoringHighWater: true)
    }

    func linger(_ event: LegEvent) {
        switch event {
        case .data, .drained:
            return
        case .endOfInput, .failed:
            perform(life.receive(.clientHungUp))
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
}
