import MITMCore

extension RuleDecision {
    /// What the rules did to a request, in the words of its rule log line: held by its `delay` (when `delayed`),
    /// `continuedAtBreakpoint`, then the local `answer` made instead of its upstream's, or else sent to a mapped origin
    /// and its headers edited. Nil when they did none of these.
    package func requestWords(delayed: Bool, continuedAtBreakpoint: Bool = false, answer: String? = nil) -> String? {
        var words: [String] = []
        if delayed, let delay, delay > 0 { words.append("delayed \(QuantityText.duration(delay))") }
        if continuedAtBreakpoint { words.append("continued at breakpoint") }
        if let answer {
            words.append(answer)
        } else {
            if let remote {
                let url = AbsoluteURL(
                    scheme: remote.scheme, host: remote.host, port: remote.port, pathAndQuery: remote.target)
                words.append("sent to \(url.text)")
            }
            if !requestHeaders.isEmpty { words.append("request headers edited") }
        }
        return words.isEmpty ? nil : words.joined(separator: "; ")
    }
}
