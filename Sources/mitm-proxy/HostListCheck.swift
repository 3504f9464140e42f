import ArgumentParser
import Foundation
import MITMCore

/// `--ignore-hosts` and `--intercept-hosts` read and checked against each other and against the expectations: an
/// expected host that the host lists pass through never gets a verdict, so the run could only fail.
struct HostListCheck {
    let policy: TunnelPolicy
    let expectations: [Expectation]

    /// The patterns of `values`: each a pattern, or `@FILE` with one pattern per line.
    static func patterns(_ values: [String], flag: String) throws -> [HostPattern] {
        try values.flatMap { value throws -> [HostPattern] in
            if value.hasPrefix("@") {
                let path = String(value.dropFirst())
                do {
                    let data = try FileReading.contents(of: path, what: "\(flag) file")
                    return try HostPatternFile.parse(String(decoding: data, as: UTF8.self), file: path)
                } catch let error as FileReadingError {
                    throw ValidationError(error.description)
                } catch {
                    throw ValidationError("\(flag) @\(error)")
                }
            }
            do {
                return [try HostPattern(value)]
            } catch {
                throw ValidationError("\(flag) \(value): \(error)")
            }
        }
    }

    /// Throws for a pattern in both lists and for an exact expected host the lists pass through.
    func validate() throws {
        if let pattern = policy.contradictoryPatterns.first {
            throw ValidationError(
                "\(pattern) is given to both --ignore-hosts and --intercept-hosts; keep it in one of them")
        }
        if let expectation = expectations.first(where: {
            $0.pattern.isExactName && policy.hostListsPassThrough($0.pattern)
        }) {
            throw ValidationError(
                "\(Self.name(expectation)): \(expectation.pattern) is passed through untouched by "
                    + "\(listsNamed), so it can never get a verdict; \(remedy(for: expectation.pattern))")
        }
    }

    /// Wildcard expectations whose hosts the lists pass through: they can only be met by hosts the lists still intercept.
    var warnings: [String] {
        expectations.filter { !$0.pattern.isExactName && policy.hostListsPassThrough($0.pattern) }.map { expectation in
            "warning: \(Self.name(expectation)): hosts matching \(expectation.pattern) are passed through untouched by \(listsNamed) "
                + "and get no verdict; \(remedy(for: expectation.pattern))"
        }
    }

    private static func name(_ expectation: Expectation) -> String {
        expectation.source.isFlag ? "--expect \(expectation)" : "expectation \(expectation) from \(expectation.source)"
    }

    private var listsNamed: String {
        switch (policy.passThroughHosts.isEmpty, policy.interceptHosts.isEmpty) {
        case (false, true): "--ignore-hosts"
        case (true, false): "--intercept-hosts"
        default: "--ignore-hosts and --intercept-hosts"
        }
    }

    private func remedy(for pattern: HostPattern) -> String {
        let host = pattern.representativeHost
        if let ignoring = policy.passThroughHosts.filter({ $0.matches(host) }).max(by: {
            $0.specificity < $1.specificity
        }) {
            return "drop \(ignoring) from --ignore-hosts or the expectation"
        }
        return "add --intercept-hosts \(pattern) or drop the expectation"
    }
}
