import Foundation
import Testing

@testable import MITMCore

@Suite struct FallbackDetectorTests {
    private let start = Date(timeIntervalSince1970: 1_000_000)

    private func refusal(_ id: Int, _ host: String, client: String = "10.0.0.7", at offset: Double) -> ProxyEvent {
        .verdict(
            ConnectionVerdict(
                connectionID: id, host: host, port: 443,
                verdict: Verdict(kind: .refused, reason: .closedAfterHandshake),
                tlsVersion: "TLSv1.3", alpn: nil, offeredALPN: [], shownCertificatePin: "pin",
                startedAt: start.addingTimeInterval(offset), handshakeMilliseconds: 2,
                decidedAt: start.addingTimeInterval(offset + 3), client: client))
    }

    private func plainFetch(_ id: Int, _ url: String, host: String, client: String = "10.0.0.7", at offset: Double)
        -> ProxyEvent
    {
        var record = ExchangeRecord(
            connectionID: id, scheme: "http", host: host, port: 80,
            request: HTTPRequestHead(method: "GET", target: url), started: start.addingTimeInterval(offset),
            finished: start.addingTimeInterval(offset + 0.1))
        record.client = client
        return .exchange(record)
    }

    @Test func aPlainFetchAfterARefusalIsAFallbackWithTheRequestLine() {
        var detector = FallbackDetector()
        #expect(detector.observe(refusal(1, "api.example.com", at: 0), at: start).isEmpty)
        let found = detector.observe(
            plainFetch(2, "http://api.example.com/login", host: "api.example.com", at: 1), at: start)
        #expect(
            found.map(\.message) == [
                "refused https://api.example.com, then fetched http://api.example.com/login in clear text (client 10.0.0.7)"
            ])
        #expect(found.first?.request == "GET http://api.example.com/login")
        #expect(
            detector.observe(plainFetch(3, "http://api.example.com/again", host: "api.example.com", at: 2), at: start)
                .isEmpty,
            "said once per client, host and channel")
    }

    @Test func aRefusalDecidedAfterTheFetchStillCounts() {
        var detector = FallbackDetector()
        #expect(
            detector.observe(plainFetch(2, "http://api.example.com/login", host: "API.example.com", at: 1), at: start)
                .isEmpty)
        let found = detector.observe(refusal(1, "api.example.com", at: 0), at: start)
        #expect(found.map(\.host) == ["api.example.com"])
    }

    @Test func aHostWithItsRootDotIsTheSameHost() {
        var detector = FallbackDetector()
        #expect(detector.observe(refusal(1, "api.example.com.", at: 0), at: start).isEmpty)
        let found = detector.observe(
            plainFetch(2, "http://api.example.com/login", host: "api.example.com", at: 1), at: start)
        #expect(found.map(\.host) == ["api.example.com"])
    }

    @Test func aFetchBeforeTheRefusalOrFromAnotherClientOrHostIsNoFallback() {
        var detector = FallbackDetector()
        _ = detector.observe(plainFetch(1, "http://api.example.com/", host: "api.example.com", at: 0), at: start)
        #expect(detector.observe(refusal(2, "api.example.com", at: 5), at: start).isEmpty)
        #expect(
            detector.observe(
                plainFetch(3, "http://api.example.com/", host: "api.example.com", client: "10.0.0.8", at: 6), at: start
            ).isEmpty)
        #expect(
            detector.observe(plainFetch(4, "http://www.example.com/", host: "www.example.com", at: 6), at: start)
                .isEmpty)
    }

    @Test func aTunnelPassedThroughAfterARefusalIsAFallback() {
        var detector = FallbackDetector()
        _ = detector.observe(refusal(1, "api.example.com", at: 0), at: start)
        _ = detector.observe(
            .connectionOpened(connectionID: 2, host: "api.example.com", port: 443, peer: "10.0.0.7:50123"),
            at: start.addingTimeInterval(1))
        let found = detector.observe(
            .tunnel(
                connectionID: 2, host: "api.example.com", port: 443, bytesUp: 10, bytesDown: 20, reason: "closed",
                passedThrough: true, started: start),
            at: start.addingTimeInterval(2))
        #expect(found.map(\.channel) == [.passedThroughTunnel])
        #expect(
            found.first?.message.contains(
                "then reached api.example.com:443 through a tunnel passed through untouched (--ignore-hosts or --intercept-hosts)"
            ) == true)
    }

    @Test func anInterceptedTunnelIsNoFallbackAndMemoryStaysBounded() {
        var detector = FallbackDetector(memoryLimit: 2)
        _ = detector.observe(refusal(1, "api.example.com", at: 0), at: start)
        _ = detector.observe(
            .connectionOpened(connectionID: 2, host: "api.example.com", port: 443, peer: "[::1]:4000"), at: start)
        _ = detector.observe(refusal(2, "api.example.com", client: "::1", at: 1), at: start)
        #expect(
            detector.observe(
                .tunnel(
                    connectionID: 2, host: "api.example.com", port: 443, bytesUp: 0, bytesDown: 0, reason: "x",
                    passedThrough: false,
                    started: start),
                at: start
            ).isEmpty)
        for id in 10..<20 { _ = detector.observe(refusal(id, "h\(id).test", at: Double(id)), at: start) }
        #expect(
            detector.observe(plainFetch(30, "http://api.example.com/", host: "api.example.com", at: 40), at: start)
                .isEmpty,
            "the oldest refusal was forgotten past the memory limit")
        #expect(PeerAddress.host(of: "[::1]:4000") == "::1")
        #expect(PeerAddress.host(of: "10.0.0.7:1") == "10.0.0.7")
        #expect(PeerAddress.host(of: "client") == nil)
    }
}

@Suite struct PinFailureReportTests {
    private func posted(_ json: String, contentLimit: Int = 65_536) -> ExchangeRecord {
        var record = ExchangeRecord(
            connectionID: 9, scheme: "https", host: "reports.example.com", port: 443,
            request: HTTPRequestHead(method: "POST", target: "/log"), started: Date(), finished: Date())
        record.requestBody = CapturedBody(limit: contentLimit)
        record.requestBody.append(Array(json.utf8))
        record.client = "10.0.0.7"
        return record
    }

    static let trustKit = """
        {"app-bundle-id":"com.example.app","app-version":"1.0","app-platform":"IOS","trustkit-version":"1.7.0",
         "hostname":"www.example.com","port":443,"noted-hostname":"example.com","include-subdomains":true,
         "enforce-pinning":false,"validated-certificate-chain":["-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"],
         "known-pins":["pin-sha256=\\"AAAA\\"","pin-sha256=\\"BBBB\\""],"validation-result":1}
        """

    @Test func aTrustKitReportIsRecognisedByItsShapeAndReportOnlyIsNamed() throws {
        let report = try #require(PinFailureReport(posted(Self.trustKit)))
        #expect(report.notedHostname == "example.com" && report.hostname == "www.example.com" && report.port == 443)
        #expect(report.isReportOnly)
        #expect(report.knownPins.count == 2 && report.validatedChainLength == 1)
        #expect(report.postedTo == "https://reports.example.com/log")
        #expect(report.summary.contains("report-only pinning is not pinning"))
        #expect(
            RunFinding.pinFailureReport(report).line.hasPrefix(
                "WARNING pin-failure report for example.com (connecting to www.example.com:443) by com.example.app"))
    }

    @Test func otherJSONAndTruncatedBodiesAreNotReports() {
        #expect(PinFailureReport(posted(#"{"hostname":"a.test","known":[1]}"#)) == nil)
        #expect(PinFailureReport(posted("[1,2]")) == nil)
        #expect(PinFailureReport(posted(Self.trustKit, contentLimit: 40)) == nil)
    }

    @Test func theReportIsAttachedToTheNotedHostWithEvidence() throws {
        var findings = RunFindings()
        let found = findings.observe(.exchange(posted(Self.trustKit)), at: Date())
        #expect(found.count == 1)
        let intercepted = ConnectionVerdict(
            connectionID: 1, host: "example.com", port: 443,
            verdict: Verdict(kind: .intercepted, reason: .applicationData),
            tlsVersion: nil, alpn: nil, offeredALPN: [], shownCertificatePin: "p", startedAt: Date(),
            handshakeMilliseconds: nil, decidedAt: Date(), client: "10.0.0.7")
        var ledger = VerdictLedger(detailLimit: 10)
        ledger.record(intercepted, replacing: nil)
        let expectation = Expectation(
            .refused, try HostPattern("example.com"),
            source: ExpectationSource(file: "Info.plist", domain: "example.com"))
        let report = VerdictReport(
            final: true, listen: "x", caCertificate: "y", silenceWindowSeconds: 3, ledger: ledger,
            expectations: [expectation], findings: findings)
        let host = try #require(report.hosts.first { $0.host == "example.com" })
        #expect(host.pinFailureReports.count == 1)
        #expect(
            host.evidence
                == "client 10.0.0.7 (trust proven); 1 connection; expectation refused:example.com from Info.plist (domain example.com)"
        )
        let table = VerdictText.table(report.hosts, expectations: report.expectations)
        #expect(table.contains("WARNING pin-failure report for example.com"))
        let decoded = try VerdictReport.decode(try report.encoded())
        #expect(decoded.hosts.first?.pinFailureReports == host.pinFailureReports)
    }
}
