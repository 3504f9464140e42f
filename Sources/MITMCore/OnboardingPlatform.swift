/// The platforms the onboarding page has CA installation steps for, and which of them a browser's User-Agent says it is
/// running on. The User-Agent is the client's to choose: it only orders the page, nothing else depends on it.
package enum OnboardingPlatform: String, Sendable, CaseIterable {
    case iOS = "ios"
    case android
    case macOS = "macos"
    case windows
    case linux
    /// Firefox's own certificate store (desktop Firefox does not use the system's by default).
    case firefox

    /// The sections in the order to show them to `userAgent`: what it runs on first (desktop Firefox: its own store,
    /// then the system's), then the rest in the usual order.
    package static func order(forUserAgent userAgent: String?) -> [OnboardingPlatform] {
        let first = detected(userAgent)
        return first + allCases.filter { !first.contains($0) }
    }

    /// What `userAgent` runs on, most specific first; empty when it does not say.
    package static func detected(_ userAgent: String?) -> [OnboardingPlatform] {
        guard let agent = userAgent else { return [] }
        let has = { (token: String) in agent.range(of: token, options: .caseInsensitive) != nil }
        // iPhone browsers (Safari, Chrome's CriOS, Firefox's FxiOS) all use the system's trust store.
        if has("iPhone") || has("iPad") || has("iPod") { return [.iOS] }
        if has("Android") { return has("Firefox/") ? [.android, .firefox] : [.android] }
        let system: OnboardingPlatform? =
            has("Windows")
            ? .windows
            : has("Macintosh") || has("Mac OS X")
                ? .macOS
                : has("Linux") || has("X11") ? .linux : nil
        if has("Firefox/") { return [.firefox] + (system.map { [$0] } ?? []) }
        return system.map { [$0] } ?? []
    }

    /// The section's title.
    package var title: String {
        switch self {
        case .iOS: "iPhone and iPad (iOS, iPadOS)"
        case .android: "Android"
        case .macOS: "macOS"
        case .windows: "Windows"
        case .linux: "Linux"
        case .firefox: "Firefox (its own certificate store)"
        }
    }
}
