import MITMCore
import Testing

@Suite struct DNSQueryTests {
    /// A stub resolver's query for `name` of `type`, id 0x1234, RD set.
    private func query(_ name: String, type: UInt16 = 1) -> [UInt8] {
        var bytes: [UInt8] = [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") { bytes += [UInt8(label.utf8.count)] + Array(label.utf8) }
        return bytes + [0, UInt8(type >> 8), UInt8(type & 0xFF), 0, 1]
    }

    @Test func anAQuestionIsReadAndAnsweredWithTheGivenAddress() throws {
        let parsed = try DNSQuery.parse(query("API.Example.com"))
        #expect(parsed.name == "api.example.com" && parsed.type == DNSQuery.typeA && parsed.id == 0x1234)
        let answer = parsed.answer(address: [198, 18, 0, 1], ttl: 60)
        #expect(Array(answer[0..<4]) == [0x12, 0x34, 0x81, 0x80], "id, QR+RD, RA, NOERROR")
        #expect(Array(answer[4..<8]) == [0, 1, 0, 1], "one question, one answer")
        #expect(Array(answer.suffix(16)) == [0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 18, 0, 1])
    }

    @Test func anotherTypeGetsAnEmptyAnswer() throws {
        let answer = try DNSQuery.parse(query("example.com", type: DNSQuery.typeAAAA)).answer(address: nil)
        #expect(Array(answer[6..<8]) == [0, 0], "no answer record")
        #expect(answer[3] & 0x0F == 0, "NOERROR")
        #expect(answer.count == query("example.com", type: 28).count, "the question echoed, nothing more")
    }

    @Test(arguments: [
        [UInt8](), [0x12], Array(repeating: 0, count: 11),
        // A response (QR set).
        [0x12, 0x34, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1],
    ])
    func datagramsThatAreNoQueryGetNoAnswer(datagram: [UInt8]) {
        #expect(throws: DNSQuery.Problem.unanswerable) { try DNSQuery.parse(datagram) }
        #expect(DNSQuery.answer(to: .unanswerable) == nil)
    }

    @Test func brokenQuestionsAreAnsweredFORMERRAndOtherOpcodesRefusedWithRCODE4() throws {
        var truncated = query("example.com")
        truncated.removeLast(3)
        var pointer = query("example.com")
        pointer[12] = 0xC0
        var twoQuestions = query("example.com")
        twoQuestions[5] = 2
        let overlong =
            [UInt8]([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])
            + Array(repeating: [UInt8(63)] + Array(repeating: 0x61, count: 63), count: 5).joined() + [0, 0, 1, 0, 1]
        for datagram in [truncated, pointer, twoQuestions, overlong] {
            do {
                _ = try DNSQuery.parse(datagram)
                Issue.record("parsed \(datagram)")
            } catch {
                let answer = try #require(DNSQuery.answer(to: error))
                #expect(answer.count == 12 && answer[3] & 0x0F == 1, "FORMERR: \(answer)")
            }
        }
        var status = query("example.com")
        status[2] = 0x10
        #expect(throws: DNSQuery.Problem.unsupportedOpcode(id: 0x1234, flags: 0x1000)) { try DNSQuery.parse(status) }
        #expect(DNSQuery.answer(to: .unsupportedOpcode(id: 0x1234, flags: 0x1000))?[3] == 0x84)
    }

    @Test func onlyANameOfHostNameLabelsIsAHostName() throws {
        #expect(try DNSQuery.parse(query("API.Example.com")).hostName == "api.example.com")
        // One label `a.b` reads like the two labels of a.b: a connection to its address would be named after another host.
        var dotted = Array(query("x").prefix(12))
        dotted += [3, UInt8(ascii: "a"), UInt8(ascii: "."), UInt8(ascii: "b"), 0, 0, 1, 0, 1]
        let parsed = try DNSQuery.parse(dotted)
        #expect(parsed.name == "a.b" && parsed.hostName == nil)
        #expect(try DNSQuery.parse(query("bad name.test")).hostName == nil)
        #expect(try DNSQuery.parse(query("caf\u{E9}.test")).hostName == nil)
        #expect(try DNSQuery.parse(query("")).hostName == nil)
    }

    @Test func garbageNeverCrashes() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            var bytes = query("a.example.com")
            for _ in 0..<3 {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &generator)) }
            if let parsed = try? DNSQuery.parse(bytes) { _ = parsed.answer(address: [198, 18, 0, 1]) }
        }
    }
}

@Suite struct FakeAddressPoolTests {
    @Test func aNameKeepsItsAddressAndTheAddressTellsTheName() {
        var pool = FakeAddressPool()
        let first = pool.address(for: "api.example.com")
        #expect(first == [198, 18, 0, 1])
        #expect(pool.address(for: "API.example.com") == first)
        #expect(pool.address(for: "cdn.example.com") == [198, 18, 0, 2])
        #expect(pool.name(for: "198.18.0.1") == "api.example.com")
        #expect(pool.name(for: "::ffff:198.18.0.2") == "cdn.example.com")
        #expect(
            pool.name(for: "198.18.0.3") == nil && pool.name(for: "10.0.0.1") == nil && pool.name(for: "fe80::1") == nil
        )
    }

    @Test func pastItsCapacityTheOldestAddressGoesToTheNextName() {
        var pool = FakeAddressPool(capacity: 2)
        let first = pool.address(for: "one.test")
        _ = pool.address(for: "two.test")
        #expect(pool.address(for: "three.test") == first)
        #expect(pool.name(for: "198.18.0.1") == "three.test")
        #expect(pool.address(for: "one.test") == [198, 18, 0, 2], "one.test lost its address and gets the next")
    }
}

@Suite struct CapturePlanTests {
    @Test func namesAndAddressesComeFromThePid() {
        let plan = CapturePlan(pid: 4_194_303)
        #expect(plan.namespace == "mitm-cap-4194303" && plan.table == "mitm_cap_4194303")
        #expect(plan.hostLink.count <= 15 && plan.clientLink.count <= 15)
        let other = CapturePlan(pid: 812)
        let host = IPAddress(other.hostAddress)?.bytes ?? []
        let client = IPAddress(other.clientAddress)?.bytes ?? []
        #expect(
            host.first == 10 && host.prefix(3) == client.prefix(3) && host.last.map { $0 % 4 } == 1
                && client.last.map { $0 % 4 } == 2)
        #expect(other.hostAddress != CapturePlan(pid: 813).hostAddress)
        #expect(!other.hostAddress.hasPrefix("10.0."))
        let ruleset = other.ruleset(transparentPort: 4000, dnsPort: 5000)
        #expect(ruleset.contains("iifname \"mcap812h\" meta l4proto tcp redirect to :4000"))
        #expect(ruleset.contains("iifname \"mcap812h\" udp dport 53 redirect to :5000"))
        #expect(ruleset.contains("udp dport != 5000 reject"))
    }

    @Test func leftoversOfDeadRunsAreFoundInEveryList() {
        let found = CapturePlan.leftovers(
            namespaces: "mitm-cap-100 (id: 3)\nmitm-cap-200\nother-ns\nmitmt9x1",
            links: "1: lo: <LOOPBACK>\n7: mcap300h@if6: <BROADCAST>\n8: mcapxh: <>",
            tables: "table inet mitm_cap_400\ntable ip nat\ntable inet mitm_cap_200",
            resolverDirectories: ["mitm-cap-500", "other"],
            isRunning: { $0 == 200 })
        #expect(found.map(\.pid) == [100, 300, 400, 500])
    }
}
