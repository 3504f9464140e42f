import MITMCore
import MITMRules
import Testing

/// Throttle and delay values outside what the proxy can schedule are refused where they are written (the flag, the
/// rules file) with the allowed range; and the lanes built from any conditions never trap on their arithmetic.
@Suite struct NetworkConditionsRangeTests {
    @Test(arguments: [
        ("down=1e300kbit", "down"), ("down=99999999999999999999kbit", "down"), ("up=1e300kbit", "up"),
        ("up=99999999999999999999kbit", "up"), ("down=0.001bit", "down"), ("latency=1e300s", "latency"),
        ("latency=9999999999999s", "latency"), ("latency=61m", "latency"),
    ])
    func outOfRangeValuesAreRefusedWithTheRange(text: String, key: String) {
        #expect {
            try NetworkConditions(parsing: text)
        } throws: { error in
            let message = (error as? RuleError)?.message ?? ""
            return message.hasPrefix("\(text) is outside") && message.contains("\(key) must be")
        }
    }

    @Test func theLimitsThemselvesAreAccepted() throws {
        let lowest = try NetworkConditions(parsing: "down=1bit,up=1bit,latency=0ms")
        #expect(lowest.downBitsPerSecond == 1 && lowest.upBitsPerSecond == 1 && lowest.latency == 0)
        let highest = try NetworkConditions(parsing: "down=100gbit,up=100gbit,latency=60m")
        #expect(highest.downBitsPerSecond == 100e9 && highest.latency == 3_600)
    }

    @Test func theFlagAndTheRulesFileNameTheValue() {
        #expect {
            try RuleFlags.throttle("api.test=down=1e300kbit")
        } throws: { error in
            (error as? RuleError)?.message.hasPrefix("--throttle api.test=down=1e300kbit: down=1e300kbit is outside")
                == true
        }
        let tree = RuleFileValue.map([
            (
                key: "rules",
                value: .list([
                    .map([
                        (key: "match", value: .scalar("api.test")),
                        (key: "throttle", value: .scalar("latency=9999999999999s")),
                    ])
                ])
            )
        ])
        #expect {
            try RuleFile.rules(from: tree, fileName: "qa.yaml", baseDirectory: "/tmp")
        } throws: { error in
            let message = (error as? RuleError)?.message ?? ""
            return message.hasPrefix("qa.yaml rule 1") && message.contains("latency=9999999999999s is outside")
        }
    }

    @Test(arguments: ["1e300s", "9999999999999s", "1441m"])
    func delaysBeyondADayAreRefused(text: String) {
        #expect(throws: RuleError.self) { try RuleFlags.delay("api.test=\(text)") }
        let tree = RuleFileValue.map([
            (
                key: "rules",
                value: .list([
                    .map([
                        (key: "match", value: .scalar("api.test")), (key: "delay", value: .scalar(text)),
                    ])
                ])
            )
        ])
        #expect(throws: RuleError.self) { try RuleFile.rules(from: tree, fileName: "qa.yaml", baseDirectory: "/tmp") }
    }

    /// Conditions made in code (the library's API) are not range-checked: their lanes and words saturate instead of trapping.
    @Test(arguments: [1e300, 1e-300, .greatestFiniteMagnitude])
    func lanesOfExtremeConditionsDoNotTrap(value: Double) {
        let conditions = NetworkConditions(down: value, up: value, latency: value, loss: 0.5)
        #expect(!conditions.description.isEmpty)
        for var lane in [conditions.downLane(), conditions.upLane()] {
            lane.enqueue([UInt8](repeating: 1, count: 4_000), now: 1_000)
            _ = lane.release(now: 2_000) { 0.9 }
            #expect(lane.nextWake(now: 2_000) != nil)
            lane.markEnd(now: 3_000)
            _ = lane.endIsDue(now: .max)
        }
        #expect(!QuantityText.duration(value).isEmpty && !QuantityText.bandwidth(value).isEmpty)
    }
}
