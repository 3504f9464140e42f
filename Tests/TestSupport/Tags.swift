import Foundation
import Testing

extension Tag {
    /// A test that opens sockets or starts processes (clients, origins, openssl, the built binary): the slow tier.
    @Tag public static var live: Self
}

extension Trait where Self == ConditionTrait {
    /// Skips a live test when the environment has `MITM_PROXY_TESTS=fast`, so the rest, the fast tier, runs in
    /// seconds. swift-testing 6.3 filters by test name only (`--filter tag:` came later), so the tier is chosen here.
    public static var skippedInFastTier: Self {
        .disabled(
            if: ProcessInfo.processInfo.environment["MITM_PROXY_TESTS"] == "fast",
            "a live test: MITM_PROXY_TESTS=fast runs the fast tier only")
    }
}
