import MITMCore
import MITMRules
import Testing

@Suite struct RuleFileTests {
    private func map(_ entries: [(String, RuleFileValue)]) -> RuleFileValue {
        .map(entries.map { (key: $0.0, value: $0.1) })
    }

    @Test func aRulesFileBecomesNamedRulesWithPathsFromItsDirectory() throws {
        let tree = map([
            (
                "rules",
                .list([
                    map([
                        ("name", .scalar("small is down")), ("match", .scalar("api.test/small")),
                        ("respond", .scalar("503")),
                    ]),
                    map([
                        (
                            "match",
                            map([
                                ("host", .scalar("api.test")), ("path", .scalar("/chunked")),
                                ("method", .scalar("get")),
                            ])
                        ),
                        ("delay", .scalar("2s")),
                    ]),
                    map([
                        ("match", .scalar("api.test/v1")), ("mapLocal", .scalar("fixtures")),
                        (
                            "responseHeaders",
                            map([
                                ("set", map([("Cache-Control", .scalar("no-store"))])),
                                ("remove", .list([.scalar("ETag")])),
                            ])
                        ),
                    ]),
                    map([("match", .scalar("*.cdn.test")), ("throttle", .scalar("edge"))]),
                    map([("match", .scalar("off.test")), ("respond", .scalar("200")), ("enabled", .scalar("false"))]),
                    map([
                        ("match", .scalar("api.test/teapot")),
                        (
                            "respond",
                            map([
                                ("status", .scalar("418")), ("body", .scalar("short and stout")),
                                ("headers", map([("X-A", .scalar("b"))])),
                            ])
                        ),
                    ]),
                ])
            )
        ])
        let rules = try RuleFile.rules(from: tree, fileName: "qa.yaml", baseDirectory: "/home/qa")
        #expect(
            rules.map(\.name) == [
                "small is down", "qa.yaml rule 2", "qa.yaml rule 3", "qa.yaml rule 4", "qa.yaml rule 6",
            ])
        #expect(rules[0].actions.respond?.status == 503)
        #expect(rules[1].methods == ["GET"] && rules[1].actions.delay == 2 && rules[1].pattern.path == "/chunked")
        #expect(rules[2].actions.mapLocal == "/home/qa/fixtures")
        #expect(rules[2].actions.responseHeaders.removeNames == ["ETag"])
        #expect(rules[3].actions.throttle?.profileName == "edge")
        #expect(
            rules[4].actions.respond
                == FixedResponse(
                    status: 418, body: "short and stout", headers: [HTTPHeaderField(name: "X-A", value: "b")]))
        let book = RuleBook(rules)
        let decision = book.decide(
            RequestFacts(scheme: "https", host: "api.test", port: 443, method: "GET", target: "/chunked/100"))
        #expect(decision.delay == 2 && decision.rules == ["qa.yaml rule 2"])
        #expect(
            book.decide(RequestFacts(scheme: "https", host: "api.test", port: 443, method: "POST", target: "/chunked"))
                .isEmpty)
    }

    @Test func mistakesNameTheRuleAndTheKey() {
        let cases: [(RuleFileValue, String)] = [
            (
                map([("rules", .list([map([("match", .scalar("a.test")), ("respnd", .scalar("503"))])]))]),
                "unknown key \"respnd\""
            ),
            (map([("rules", .list([map([("match", .scalar("a.test"))])]))]), "no action"),
            (map([("rules", .list([map([("respond", .scalar("503"))])]))]), "no \"match\""),
            (
                map([
                    (
                        "rules",
                        .list([map([("name", .scalar("x")), ("match", .scalar("a.test")), ("delay", .scalar("soon"))])])
                    )
                ]), "rule 1 (x): delay"
            ),
            (
                map([("rules", .list([map([("match", .scalar("a.test/x")), ("throttle", .scalar("3g"))])]))]),
                "whole connections"
            ),
            (
                map([("rules", .list([map([("match", .scalar("a.test")), ("status", .scalar("99"))])]))]),
                "between 200 and 599"
            ),
            (map([("rulez", .list([]))]), "unknown top-level key"),
            (.scalar("hello"), "expected \"rules:\""),
            (
                map([
                    (
                        "rules",
                        .list([
                            map([
                                ("match", .scalar("a.test")),
                                ("requestHeaders", map([("set", map([("Bad Name", .scalar("x"))]))])),
                            ])
                        ])
                    )
                ]), "not a header name"
            ),
        ]
        for (tree, expected) in cases {
            do {
                _ = try RuleFile.rules(from: tree, fileName: "qa.yaml", baseDirectory: "/")
                Issue.record("accepted; expected an error containing \(expected)")
            } catch {
                #expect(error.description.contains(expected), "\(error.description)")
                #expect(error.description.hasPrefix("qa.yaml"), "\(error.description)")
            }
        }
    }
}
