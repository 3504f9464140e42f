import MITMCore

extension ProxyConnection {
    /// Answers a CONNECT whose proxy credentials are missing or wrong with a `407`: at once, or, when its address
    /// has sent wrong ones again and again, after a wait that grows with each (`CredentialBackoff`).
    func refuseCredentials(_ head: HTTPRequestHead, problem: String) {
        let wait =
            head.headers.contains("proxy-authorization")
            ? context.credentialWait(afterWrongCredentialsFrom: clientAddress) : 0
        guard wait > 0 else {
            answerAndLinger(.proxyAuthenticationRequired(reason: problem))
            return
        }
        // Reading on, as while lingering: a client that hangs up meanwhile is closed and gets nothing.
        receive(.linger(seconds: wait + 2, now: context.clock.now()))
        nonisolated(unsafe) let connection = self
        credentialWait = context.clock.schedule(after: wait, on: loop) {
            connection.credentialWait = nil
            guard !connection.isClosed else { return }
            connection.answerAndLinger(.proxyAuthenticationRequired(reason: problem))
        }
    }
}
