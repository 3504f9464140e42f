/// Combines `--expect` flags with the expectations read from the app's configuration (`--expect-from`):
/// a flag for the same pattern replaces what the file says, and a file expectation repeated (by another
/// file, or the same domain twice) counts once.
public struct ExpectationMerge: Sendable {
    /// A file expectation left out because a flag names the same pattern.
    public struct Override: Sendable, Equatable {
        /// What the file said.
        public let fromFile: Expectation
        /// The flag that decides instead.
        public let flag: Expectation
    }

    /// The expectations to check: the flags first, then the file expectations that remain.
    public let expectations: [Expectation]
    /// File expectations replaced by a flag, to be said at start-up.
    public let overrides: [Override]

    /// Merges `flags` and `fromFiles` (in file order).
    public init(flags: [Expectation], fromFiles: [Expectation]) {
        var kept = flags
        var overrides: [Override] = []
        for expectation in fromFiles {
            if let flag = flags.first(where: { $0.pattern == expectation.pattern }) {
                overrides.append(Override(fromFile: expectation, flag: flag))
            } else if !kept.contains(where: { $0.pattern == expectation.pattern && $0.outcome == expectation.outcome })
            {
                kept.append(expectation)
            }
        }
        expectations = kept
        self.overrides = overrides
    }
}

extension ExpectationMerge.Override: CustomStringConvertible {
    /// `--expect intercepted:api.example.com overrides refused:api.example.com from Info.plist (domain api.example.com): the flag wins`.
    public var description: String {
        let said = "\(fromFile) from \(fromFile.source)"
        return flag.outcome == fromFile.outcome
            ? "--expect \(flag) repeats \(said): counted once" : "--expect \(flag) overrides \(said): the flag wins"
    }
}
