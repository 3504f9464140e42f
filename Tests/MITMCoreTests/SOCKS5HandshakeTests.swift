import MITMCore
import Testing

/// The SOCKS5 handshake without sockets: every message split anywhere, each address type, authentication, and
/// each way a client can get it wrong.
@Suite struct SOCKS5HandshakeTests {
    private func sent(_ actions: [SOCKS5Handshake.Action]) -> [[UInt8]] {
        actions.compactMap { if case .send(let bytes) = $0 { bytes } else { nil } }
    }

    private func connectRequest(_ addressType: UInt8, _ address: [UInt8], port: UInt16 = 443) -> [UInt8] {
        [5, 1, 0, addressType] + address + [UInt8(port >> 8), UInt8(port & 0xFF)]
    }

    @Test func aDomainNameRequestByteByByteThenTheTunnelsFirstBytes() {
        var handshake = SOCKS5Handshake(requiresCredentials: false)
        let name = Array("Api.Example.com".utf8)
        let bytes: [UInt8] = [5, 2, 2, 0] + connectRequest(3, [UInt8(name.count)] + name) + [0x16, 0x03, 0x01]
        var actions: [SOCKS5Handshake.Action] = []
        for byte in bytes { actions += handshake.receive([byte]) }
        #expect(sent(actions) == [[5, 0]], "no authentication chosen")
        #expect(actions.contains(.connect(host: "api.example.com", port: 443)))
        #expect(handshake.state == .connectRequested)
        #expect(handshake.takeBuffered() == [0x16, 0x03, 0x01], "what followed the request belongs to the tunnel")
        #expect(SOCKS5Handshake.reply(.succeeded) == [5, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    }

    @Test(arguments: [
        (UInt8(1), [UInt8]([10, 0, 0, 7]), "10.0.0.7"),
        (UInt8(4), [UInt8]([0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]), "2001:db8::1"),
    ])
    func addressRequests(addressType: UInt8, address: [UInt8], host: String) {
        var handshake = SOCKS5Handshake(requiresCredentials: false)
        let actions = handshake.receive([5, 1, 0] + connectRequest(addressType, address, port: 8443))
        #expect(actions.last == .connect(host: host, port: 8443))
    }

    @Test func credentialsAreCheckedByTheCallerAndAWrongOneEndsIt() {
        var handshake = SOCKS5Handshake(requiresCredentials: true)
        var actions = handshake.receive([5, 1, 2, 1, 2] + Array("qa".utf8) + [3] + Array("pwd".utf8))
        #expect(sent(actions) == [[5, 2]])
        #expect(actions.last == .checkCredentials(user: "qa", password: "pwd"))
        actions = handshake.credentialsChecked(false)
        #expect(sent(actions) == [[1, 1]])
        #expect(handshake.state == .failed)

        var good = SOCKS5Handshake(requiresCredentials: true)
        _ = good.receive(
            [5, 1, 2, 1, 2] + Array("qa".utf8) + [3] + Array("pwd".utf8) + connectRequest(1, [127, 0, 0, 1]))
        actions = good.credentialsChecked(true)
        #expect(sent(actions) == [[1, 0]])
        #expect(
            actions.last == .connect(host: "127.0.0.1", port: 443),
            "the request that arrived with the credentials is read after the check")
    }

    @Test func aClientWithoutAnAcceptableMethodIsToldSo() {
        var needsPassword = SOCKS5Handshake(requiresCredentials: true)
        let actions = needsPassword.receive([5, 1, 0])
        #expect(sent(actions) == [[5, 0xFF]])
        guard case .fail(let reason)? = actions.last else {
            Issue.record("\(actions)")
            return
        }
        #expect(reason.contains("--proxy-auth"))
    }

    @Test func unsupportedCommandsAddressTypesAndNamesGetTheirReplyCodes() {
        var bind = SOCKS5Handshake(requiresCredentials: false)
        #expect(
            sent(bind.receive([5, 1, 0, 5, 2, 0, 1, 1, 2, 3, 4, 0, 80])) == [
                [5, 0], SOCKS5Handshake.reply(.commandNotSupported),
            ])
        var unknownType = SOCKS5Handshake(requiresCredentials: false)
        #expect(
            sent(unknownType.receive([5, 1, 0, 5, 1, 0, 9])).last == SOCKS5Handshake.reply(.addressTypeNotSupported))
        var hostile = SOCKS5Handshake(requiresCredentials: false)
        let name = Array("evil\r\nHost: x".utf8)
        let actions = hostile.receive([5, 1, 0] + connectRequest(3, [UInt8(name.count)] + name))
        #expect(sent(actions).last == SOCKS5Handshake.reply(.hostUnreachable))
        #expect(hostile.state == .failed)
        var notSOCKS = SOCKS5Handshake(requiresCredentials: false)
        #expect(sent(notSOCKS.receive([4, 1, 0, 80])).isEmpty, "SOCKS4 gets no SOCKS5 answer")
        #expect(notSOCKS.state == .failed)
    }
}
