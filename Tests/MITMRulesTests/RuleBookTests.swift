import MITMCore
import MITMRules
import Testing

@Suite struct RuleBookTests {
    private func facts(_ url: String, method: String = "GET") -> RequestFacts {
        let scheme = url.hasPrefix("http://") ? "http" : "https"
        let rest = url.drop { $0 != "/" }.dropFirst(2)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        return RequestFacts(
            scheme: scheme, host: String(rest[..<slash]), port: scheme == "https" ? 443 : 80, method: method,
            target: rest[slash...].isEmpty ? "/" : String(rest[slash...]))
    }

    @Test func pathPrefixesStopAtSegmentsAndGlobsCoverTheWholePath() throws {
        let prefix = try URLPattern(parsing: "api.test/v1")
        #expect(prefix.matches(facts("https://api.test/v1")))
        #expect(prefix.matches(facts("https://api.test/v1/items?page=2")))
        #expect(prefix.matches(facts("https://api.test/v1?x=1")))
        #expect(!prefix.matches(facts("https://api.test/v10")))
        #expect(!prefix.matches(facts("https://www.api.test/v1")))
        let glob = try URLPattern(parsing: "https://*.api.test/users/*/avatar.png")
        #expect(glob.matches(facts("https://eu.api.test/users/42/avatar.png")))
        #expect(glob.matches(facts("https://eu.api.test/users/a/b/avatar.png")))
        #expect(!glob.matches(facts("http://eu.api.test/users/42/avatar.png")))
        #expect(!glob.matches(facts("https://eu.api.test/users/42/avatar.png.bak")))
        let everything = try URLPattern(parsing: "api.test")
        #expect(everything.matches(facts("http://api.test/anything")))
        #expect(try URLPattern(parsing: "api.test/search?q=*").matches(facts("https://api.test/search?q=cats")))
    }

    @Test func badPatternsSayWhatIsWrong() {
        #expect(throws: RuleError.self) { try URLPattern(parsing: "ftp://api.test/") }
        #expect(throws: RuleError.self) { try URLPattern(parsing: "api.test:443/x") }
        #expect(throws: RuleError.self) { try URLPattern(parsing: "api.test/a b") }
        #expect(throws: RuleError.self) { try RuleFlags.mapLocal("api.test/x", baseDirectory: "/") }
        #expect(throws: RuleError.self) { try RuleFlags.respond("api.test/x=999") }
        #expect(throws: RuleError.self) { try RuleFlags.delay("api.test/x=soon") }
        #expect(throws: RuleError.self) { try RuleFlags.fault("api.test/x=explode") }
        #expect(throws: RuleError.self) { try RuleFlags.mapRemote("api.test/=staging.test") }
        do {
            _ = try RuleFlags.throttle("api.test=5g")
            Issue.record("5g accepted")
        } catch {
            #expect(error.description.contains("edge, 3g, lte, offline"), "\(error)")
        }
    }

    @Test func theFirstAnswerWinsAndHeaderEditsAddUp() throws {
        var headers = RuleActions()
        headers.requestHeaders = HeaderEdits(
            setFields: [HTTPHeaderField(name: "X-Debug", value: "1")], removeNames: ["Cookie"])
        headers.delay = 2
        var laterHeaders = RuleActions()
        laterHeaders.requestHeaders = HeaderEdits(setFields: [HTTPHeaderField(name: "X-Trace", value: "on")])
        laterHeaders.delay = 5
        let book = RuleBook([
            try RuleFlags.respond("api.test/small=503"),
            try RuleFlags.mapLocal("api.test/=mock", baseDirectory: "/srv"),
            TrafficRule(name: "headers", pattern: try URLPattern(parsing: "*.test"), actions: headers),
            TrafficRule(
                name: "more headers", pattern: try URLPattern(parsing: "api.test"), methods: ["post"],
                actions: laterHeaders),
        ])
        let small = book.decide(facts("https://api.test/small"))
        #expect(small.answer == .fixed(FixedResponse(status: 503), rule: "--respond api.test/small=503"))
        #expect(small.rules == ["--respond api.test/small=503", "headers"])
        #expect(small.delay == 2)
        let other = book.decide(facts("https://api.test/v1/a.json", method: "POST"))
        #expect(
            other.answer == .mapLocal(root: "/srv/mock", remainder: "v1/a.json", rule: "--map-local api.test/=mock"))
        #expect(other.requestHeaders.setFields.map(\.name) == ["X-Debug", "X-Trace"])
        #expect(other.delay == 2)
        #expect(other.rules.count == 3)
        #expect(book.decide(facts("https://elsewhere.example/")).isEmpty)
        #expect(book.answersEveryRequest(host: "api.test", scheme: "https") == "--map-local api.test/=mock")
        #expect(book.answersEveryRequest(host: "www.test", scheme: "https") == nil)
    }

    @Test func mapRemoteReplacesTheOriginAndThePathPrefix() throws {
        let book = RuleBook([
            try RuleFlags.mapRemote("api.test/v1=https://staging.test:8443/v2"),
            try RuleFlags.mapRemote("www.test/=http://127.0.0.1:9000/"),
        ])
        let mapped = try #require(book.decide(facts("https://api.test/v1/users?page=2")).remote)
        #expect(mapped.scheme == "https" && mapped.host == "staging.test" && mapped.port == 8443)
        #expect(mapped.target == "/v2/users?page=2")
        #expect(mapped.authority == "staging.test:8443")
        #expect(book.decide(facts("https://api.test/v1")).remote?.target == "/v2")
        let root = try #require(book.decide(facts("https://www.test/small")).remote)
        #expect(root.target == "/small" && root.host == "127.0.0.1" && root.port == 9000 && root.scheme == "http")
        #expect(book.mayMapRemote(host: "api.test") && !book.mayMapRemote(host: "other.test"))
    }

    @Test func throttleProfilesAndTheMostSpecificHostDecide() throws {
        let book = RuleBook([
            try RuleFlags.throttle("3g"),
            try RuleFlags.throttle("api.test=down=512kbit"),
            try RuleFlags.throttle("*.cdn.test=down=256kbit,up=64kbit,latency=300ms,loss=2%"),
            try RuleFlags.throttle("dead.test=offline"),
        ])
        #expect(book.conditions(forHost: "api.test")?.conditions == NetworkConditions(down: 512_000))
        #expect(book.conditions(forHost: "api.test")?.rule == "--throttle api.test=down=512kbit")
        #expect(book.conditions(forHost: "other.test")?.conditions.profileName == "3g")
        let cdn = try #require(book.conditions(forHost: "img.cdn.test")?.conditions)
        #expect(
            cdn.downBitsPerSecond == 256_000 && cdn.upBitsPerSecond == 64_000 && cdn.latency == 0.3 && cdn.loss == 0.02)
        #expect(cdn.description == "down 256kbit/s, up 64kbit/s, +300ms per round trip, 2% loss")
        #expect(book.conditions(forHost: "dead.test")?.conditions.isOffline == true)
        #expect(!book.hasRequestRules)
        #expect(book.decide(facts("https://api.test/")).isEmpty)
    }

    @Test func localFilesStayInsideTheirDirectory() {
        #expect(LocalFilePath.resolve(root: "/srv/mock.json", isDirectory: false, remainder: "x/y") == "/srv/mock.json")
        #expect(
            LocalFilePath.resolve(root: "/srv/mock", isDirectory: true, remainder: "v1/a%20b.json")
                == "/srv/mock/v1/a b.json")
        #expect(LocalFilePath.resolve(root: "/srv/mock/", isDirectory: true, remainder: "") == "/srv/mock/index.html")
        #expect(
            LocalFilePath.resolve(root: "/srv/mock", isDirectory: true, remainder: "docs/")
                == "/srv/mock/docs/index.html")
        #expect(LocalFilePath.resolve(root: "/srv/mock", isDirectory: true, remainder: "../etc/passwd") == nil)
        #expect(LocalFilePath.resolve(root: "/srv/mock", isDirectory: true, remainder: "a/%2e%2e/%2e%2e/x") == nil)
        #expect(LocalFilePath.resolve(root: "/srv/mock", isDirectory: true, remainder: "bad%zz") == nil)
        #expect(MediaType.forFile("/srv/a.JSON") == "application/json")
        #expect(MediaType.forFile("/srv/noext") == "application/octet-stream")
    }

    @Test func rangesFollowRFC9110() {
        #expect(ByteRange.of(nil, size: 100) == .whole)
        #expect(ByteRange.of("bytes=0-9", size: 100) == .partial(offset: 0, length: 10))
        #expect(ByteRange.of("bytes=90-", size: 100) == .partial(offset: 90, length: 10))
        #expect(ByteRange.of("bytes=-30", size: 100) == .partial(offset: 70, length: 30))
        #expect(ByteRange.of("bytes=50-500", size: 100) == .partial(offset: 50, length: 50))
        #expect(ByteRange.of("bytes=100-", size: 100) == .unsatisfiable)
        #expect(ByteRange.of("bytes=0-1,5-6", size: 100) == .whole)
        #expect(ByteRange.of("items=0-1", size: 100) == .whole)
        #expect(ByteRange.of("bytes=9-3", size: 100) == .whole)
    }
}
