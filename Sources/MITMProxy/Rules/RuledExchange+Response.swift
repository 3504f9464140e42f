import MITMRules

extension RuledExchange {
    /// Takes a response head with `status` through the machine until the head is ready: `edit` performs each change
    /// to the head (status, header edits, the replaced body's length), the `bodyFile` is read here. Returns the words
    /// that say what the rules did.
    mutating func rewriteResponseHead(status: Int, isHEAD: Bool, _ edit: (Action) -> Void) throws(ImpossibleEvent)
        -> String?
    {
        var pending = try handle(.responseHead(status: status))
        var words: String?
        while !pending.isEmpty {
            switch pending.removeFirst() {
            case .readReplacement(let path):
                let read = RuledAnswer.readWhole(path).mapError { ReplacementFailure($0.description) }
                pending += try handle(.replacementRead(read, isHEAD: isHEAD))
            case .report(let text):
                words = text
            case let action:
                edit(action)
            }
        }
        return words
    }
}
