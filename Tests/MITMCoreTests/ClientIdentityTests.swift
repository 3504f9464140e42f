import Foundation
import Testing

@testable import MITMCore

/// Trust, spares and disagreement per client rather than per address, without sockets.
@Suite struct ClientIdentityTests {
    private func identity(
        _ executable: String?, pid: Int32 = 100, stable: String, address: String = "127.0.0.1",
        inCommand: Bool? = true
    ) -> ClientIdentity {
        var hello = ClientHello(
            serverName: "x.test", alpnProtocols: [], legacyVersion: 0x0303, supportedVersions: [], recordBytes: 0)
        hello.cipherSuites = stable == "curl" ? [0x1301, 0x1302] : [0x1303]
        return ClientIdentity(
            address: address, fingerprint: ClientFingerprint(hello),
            process: executable.map {
                ClientProcess(pid: pid, executable: $0, commandLine: $0, inClientCommand: inCommand)
            },
            processUnknown: executable == nil ? .remote : nil)
    }

    private func connection(
        _ id: Int, _ host: String, _ kind: VerdictKind, _ reason: VerdictReason, _ who: ClientIdentity
    ) -> ConnectionVerdict {
        var record = ConnectionVerdict(
            connectionID: id, host: host, port: 443, verdict: Verdict(kind: kind, reason: reason), tlsVersion: nil,
            alpn: nil, offeredALPN: [], shownCertificatePin: "", startedAt: Date(timeIntervalSince1970: 0),
            handshakeMilliseconds: nil, decidedAt: Date(timeIntervalSince1970: 0), client: who.address)
        record.identity = who
        return record
    }

    private func check(_ connections: [ConnectionVerdict], trustPerAddress: Bool = false) throws -> [ExpectationResult]
    {
        var ledger = VerdictLedger(detailLimit: 10)
        for connection in connections { ledger.record(connection, replacing: nil) }
        let expectations = try ["refused:pinned.test"].map(Expectation.init(parsing:))
        return ExpectationCheck(
            expectations, provenClients: ledger.provenClients, trustPerAddress: trustPerAddress,
            clientLabels: ledger.clientLabels
        ).evaluate(ledger.hostVerdicts)
    }

    /// The false green: curl proves trust on one address, Java (another fingerprint and program) refuses.
    @Test func anotherClientOnTheSameAddressProvesNothing() throws {
        let curl = identity("/usr/bin/curl", pid: 812, stable: "curl")
        let java = identity("/usr/lib/jvm/bin/java", pid: 840, stable: "java")
        let connections = [
            connection(1, "control.test", .intercepted, .applicationData, curl),
            connection(2, "pinned.test", .refused, .closedInHandshake, java),
        ]
        let result = try check(connections)[0]
        #expect(!result.met)
        #expect(
            result.explanation.contains(
                "nothing proven for this client: java (pid 840) refused pinned.test (closed-in-handshake)"))
        #expect(result.explanation.contains("curl (pid 812) trusts the CA, but that proves nothing for this client"))
        let perAddress = try check(connections, trustPerAddress: true)[0]
        #expect(perAddress.met)
        #expect(perAddress.explanation.contains("ADDRESS"))
    }

    @Test func anotherRunOfTheSameProgramIsTheSameClient() throws {
        let first = identity("/usr/bin/curl", pid: 812, stable: "curl")
        let second = identity("/usr/bin/curl", pid: 900, stable: "curl")
        #expect(first.key == second.key)
        #expect(
            try check([
                connection(1, "control.test", .intercepted, .applicationData, first),
                connection(2, "pinned.test", .refused, .closedAfterHandshake, second),
            ])[0].met)
    }

    @Test func theSameStackInAnotherProgramOrOutsideTheCommandIsAnotherClient() throws {
        let curl = identity("/usr/bin/curl", stable: "curl")
        let other = identity("/opt/app/bin/app", stable: "curl")
        let outside = identity("/usr/bin/curl", stable: "curl", inCommand: false)
        #expect(Set([curl.key, other.key, outside.key]).count == 3)
        #expect(outside.label.contains("outside the client command"))
        #expect(
            try !check([
                connection(1, "control.test", .intercepted, .applicationData, curl),
                connection(2, "pinned.test", .refused, .closedAfterHandshake, outside),
            ])[0].met)
    }

    /// A phone: processes are invisible; the address and the fingerprint tell the app from its WebView.
    @Test func aRemoteClientIsItsAddressAndFingerprint() throws {
        let app = identity(nil, stable: "okhttp", address: "192.168.1.7")
        let webView = identity(nil, stable: "curl", address: "192.168.1.7")
        #expect(app.key != webView.key)
        #expect(app.processUnknown == .remote)
        #expect(app.label.hasPrefix("192.168.1.7 [t1"))
        #expect(ClientIdentity.address(ofKey: app.key) == "192.168.1.7")
        #expect(
            try !check([
                connection(1, "control.test", .intercepted, .applicationData, webView),
                connection(2, "pinned.test", .refused, .alert, app),
            ])[0].met)
    }

    /// A local client whose process lookup failed says why: a failed `--expect` then explains itself.
    @Test func aFailedProcessLookupIsNamedInTheLabel() {
        var gone = identity(nil, stable: "curl")
        gone.processUnknown = .gone
        #expect(gone.label.hasSuffix("(\(ProcessUnknownReason.gone.text))"))
        var notLookedUp = gone
        notLookedUp.processUnknown = .notLookedUp
        #expect(!notLookedUp.label.contains("process"))
        #expect(!identity(nil, stable: "curl", address: "192.168.1.7").label.contains("process"))
    }

    @Test func clientsThatDisagreeAboutAHostAreShownByName() {
        let curl = identity("/usr/bin/curl", pid: 812, stable: "curl")
        let python = identity("/usr/bin/python3", pid: 840, stable: "python")
        let hosts = HostVerdict.aggregate([
            connection(1, "open.test", .intercepted, .applicationData, curl),
            connection(2, "open.test", .intercepted, .applicationData, curl),
            connection(3, "open.test", .refused, .closedAfterHandshake, python),
            connection(4, "agreed.test", .intercepted, .applicationData, curl),
            connection(5, "agreed.test", .intercepted, .applicationData, python),
        ])
        let open = hosts.first { $0.host == "open.test" }
        #expect(open?.verdict == .intercepted)
        #expect(
            open?.disagreement
                == "clients disagree: curl (pid 812) intercepted 2; python3 (pid 840) refused 1 (closed-after-handshake)"
        )
        #expect(hosts.first { $0.host == "agreed.test" }?.disagreement == nil)
        let table = VerdictText.table(hosts, expectations: [])
        #expect(table.contains("clients disagree: curl (pid 812) intercepted 2"))
    }

    @Test func anUpgradedVerdictMovesThatClientsCount() {
        let curl = identity("/usr/bin/curl", pid: 812, stable: "curl")
        var ledger = VerdictLedger(detailLimit: 10)
        ledger.record(connection(1, "open.test", .inconclusive, .idle, curl), replacing: nil)
        ledger.record(
            connection(1, "open.test", .intercepted, .applicationData, curl),
            replacing: Verdict(kind: .inconclusive, reason: .idle))
        #expect(
            ledger.hostVerdicts.first?.byClient == [
                HostClientTally(client: "curl (pid 812)", key: curl.key, counts: [.intercepted: 1])
            ])
    }

    @Test func severalProcessesOfOneClientAreListed() {
        var ledger = VerdictLedger(detailLimit: 10)
        ledger.record(
            connection(
                1, "a.test", .intercepted, .applicationData, identity("/usr/bin/curl", pid: 812, stable: "curl")),
            replacing: nil)
        ledger.record(
            connection(
                2, "b.test", .intercepted, .applicationData, identity("/usr/bin/curl", pid: 815, stable: "curl")),
            replacing: nil)
        #expect(Array(ledger.clientLabels.values) == ["curl (pids 812, 815)"])
    }

    @Test func theSocketTablesAreRead() {
        #expect(SocketTable.endpoint(address: [127, 0, 0, 1], port: 8080) == "0100007F:1F90")
        #expect(
            SocketTable.endpoint(address: [UInt8](repeating: 0, count: 15) + [1], port: 443)
                == "00000000000000000000000001000000:01BB")
        #expect(SocketTable.endpoint(address: [1, 2, 3], port: 1) == nil)
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 85540 1 0000000023fe41a5
               1: 0100007F:C350 0100007F:1F90 06 00000000:00000000 03:0000090E 00000000     0        0 0 3 00000000a4091bf2
               2: 0100007F:C351 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 91234 1 0000000000000000
            """
        #expect(SocketTable.inode(in: table, local: "0100007F:C351") == 91234)
        #expect(SocketTable.inode(in: table, local: "0100007F:C350") == nil, "a closing socket no process owns")
        #expect(SocketTable.inode(in: table, local: "0100007F:C351", remote: "0100007F:0050") == nil)
        #expect(SocketTable.socketInode(link: "socket:[91234]") == 91234)
        #expect(SocketTable.socketInode(link: "pipe:[5]") == nil)
        #expect(SocketTable.parentPID(stat: "840 (my (odd) name) S 812 840 812 0 -1") == 812)
        #expect(SocketTable.parentPID(stat: "garbage") == nil)
    }
}
