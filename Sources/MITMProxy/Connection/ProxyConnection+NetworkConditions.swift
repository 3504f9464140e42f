import MITMCore

/// `--throttle`: a connection to a throttled host crosses a simulated network from then on.
extension ProxyConnection {
    /// Puts the connection behind the network conditions the rules give `host`, once: a plain-HTTP connection
    /// keeps those of the first host it asked for. Returns false when the host is `offline`: the client got a 502.
    func enterNetworkConditions(host: String, port: Int) -> Bool {
        guard !(clientSocket is ThrottledStream),
            let (conditions, rule) = context.rules.current.conditions(forHost: host)
        else {
            return true
        }
        if conditions.isOffline {
            context.events.emit(
                .ruleFired(
                    RuleFiring(
                        connectionID: id, host: host, port: port, rules: [rule],
                        action: "answered 502: the host is offline")))
            answerAndLinger(.error(status: 502, reason: "\(host) is offline (rule \(rule))"))
            return false
        }
        let throttled = ThrottledStream(
            wrapping: clientSocket, conditions: conditions, rule: rule, clock: context.clock)
        throttled.delegate = self
        clientSocket = throttled
        context.events.emit(
            .ruleFired(
                RuleFiring(
                    connectionID: id, host: host, port: port, rules: [rule],
                    action: "throttled: \(conditions)")))
        return true
    }
}
