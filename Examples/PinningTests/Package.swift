// swift-tools-version: 6.0
// A team's own test package, checking its client's certificate pinning with mitm-proxy in-process. It depends on
// mitm-proxy by URL and version, as a user's package does: scripts/test-example points that URL at a tagged bare clone
// of this checkout (a SwiftPM mirror) and runs these tests.
import PackageDescription

let package = Package(
    name: "PinningTests",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://git.example.com/mitm-proxy.git", from: "0.1.0"),
    ],
    targets: [
        .testTarget(
            name: "PinningTests",
            dependencies: [.product(name: "MITMProxy", package: "mitm-proxy")],
            // Swift 7's rule already: a member is visible only when its module is imported. `import MITMProxy` is
            // enough because MITMProxy re-exports the module that declares the verdicts and expectations.
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
