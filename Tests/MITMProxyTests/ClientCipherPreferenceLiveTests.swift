import Testing

/// The forged handshake takes the cipher suite the client puts first, as the real server would with OpenSSL's and
/// nginx's defaults: a phone without AES hardware that asks for ChaCha20 gets it, and a client asking for AES-128-GCM
/// does not pay for AES-256.
@Suite(.tags(.live), .skippedInFastTier) struct ClientCipherPreferenceLiveTests {
    @Test(arguments: [
        (
            ["-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384"],
            "TLS_CHACHA20_POLY1305_SHA256"
        ),
        (["-tls1_3", "-ciphersuites", "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"], "TLS_AES_128_GCM_SHA256"),
        (
            [
                "-tls1_2", "-cipher",
                "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:"
                    + "ECDHE-RSA-AES128-GCM-SHA256",
            ], "CHACHA20-POLY1305"
        ),
    ])
    func theClientsFirstSuiteIsTheOneNegotiated(options: [String], expected: String) async throws {
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["cipher.origin.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let request = "GET /hello HTTP/1.1\r\nHost: cipher.origin.test\r\nConnection: close\r\n\r\n"
        let session = try await OpenSSLClient.connect(
            through: proxy, to: "cipher.origin.test", port: origin.port,
            options + ["-ign_eof", "-CAfile", proxy.caCertificate, "-servername", "cipher.origin.test"],
            stdin: Array(request.utf8))
        #expect(session.verified && session.text.contains("hello from origin"), "\(session.text)")
        let cipherLine = session.text.split(separator: "\n").first { $0.contains("Cipher is ") }
        #expect(cipherLine?.hasSuffix(expected) == true, "\(cipherLine ?? "no cipher line"): \(session.text)")
    }
}
