import MITMCore
import Testing

@Suite struct OnboardingPlatformTests {
    @Test(arguments: [
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
            [OnboardingPlatform.iOS]
        ),
        (
            "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0 Mobile/15E148 Safari/604.1",
            [.iOS]
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/121.0 Mobile/15E148 Safari/605.1.15",
            [.iOS]
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36",
            [.android]
        ),
        ("Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0", [.android, .firefox]),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36 Edg/124.0",
            [.windows]
        ),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0", [.firefox, .windows]),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
            [.macOS]
        ),
        ("Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0", [.firefox, .linux]),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36", [.linux]),
        ("curl/7.88.1", []),
    ])
    func theBrowsersPlatformComesFirst(userAgent: String, detected: [OnboardingPlatform]) {
        #expect(OnboardingPlatform.detected(userAgent) == detected)
        let order = OnboardingPlatform.order(forUserAgent: userAgent)
        #expect(Array(order.prefix(detected.count)) == detected)
        #expect(
            Set(order) == Set(OnboardingPlatform.allCases) && order.count == OnboardingPlatform.allCases.count,
            "every platform, once")
    }

    @Test func withoutAUserAgentTheUsualOrderStands() {
        #expect(OnboardingPlatform.order(forUserAgent: nil) == OnboardingPlatform.allCases)
    }
}

@Suite struct RootCertificateProfileTests {
    @Test func theUUIDsAreVersion8UUIDsFromTheDigest() {
        let digest = (0..<32).map { UInt8($0 * 7 % 256) }
        let profile = RootCertificateProfile(
            certificateDER: [0x30, 0x03, 0x02, 0x01, 0x01], certificateSHA256: digest, displayName: "CA <&> \"x\"")
        #expect(profile.profileUUID == "00070E15-1C23-8A31-B83F-464D545B6269")
        #expect(profile.payloadUUID.count == 36 && profile.payloadUUID != profile.profileUUID)
        #expect(profile.xml.contains("<string>CA &lt;&amp;&gt; &quot;x&quot;</string>"))
        #expect(profile.xml.contains("<string>com.apple.security.root</string>"))
        #expect(profile.xml.contains("MAMCAQE="), "the DER, in base64")
    }
}
