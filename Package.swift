// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "mitm-proxy",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "mitm-proxy", targets: ["mitm-proxy"]),
        .library(name: "MITMProxy", targets: ["MITMProxy"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "CMITMShims",
            dependencies: ["COpenSSL"],
            cSettings: [.define("OPENSSL_SUPPRESS_DEPRECATED"), .define("_GNU_SOURCE")]
        ),
        .target(name: "MITMCore", dependencies: ["CZlib"]),
        .target(name: "MITMTLS", dependencies: ["COpenSSL", "CMITMShims", "MITMCore"]),
        .target(name: "MITMIO", dependencies: ["CMITMShims"]),
        .target(name: "MITMHTTP2", dependencies: ["CNGHTTP2", "MITMCore"]),
        .target(
            name: "MITMProxy",
            dependencies: ["MITMCore", "MITMTLS", "MITMIO", "MITMHTTP2", "CNGHTTP2",
                           .product(name: "Yams", package: "Yams")],
            // The web UI's files, compiled into the binary: nothing to install beside it, nothing fetched at run time.
            resources: [.embedInCode("Web/index.html"), .embedInCode("Web/app.js"), .embedInCode("Web/board.css")]
        ),
        .target(name: "MITMPins", dependencies: ["MITMCore", "MITMTLS", "COpenSSL", "CMITMShims"]),
        .executableTarget(
            name: "mitm-proxy",
            dependencies: [
                "MITMProxy",
                "MITMPins",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "MITMCoreTests", dependencies: ["MITMCore"]),
        .testTarget(name: "MITMTLSTests", dependencies: ["MITMTLS", "MITMCore"]),
        .testTarget(name: "MITMHTTP2Tests", dependencies: ["MITMHTTP2", "MITMCore"]),
        .testTarget(name: "MITMIOTests", dependencies: ["MITMIO"]),
        .testTarget(
            name: "MITMProxyTests",
            dependencies: ["MITMProxy", "MITMTLS", "MITMCore", "MITMHTTP2"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "MITMPinsTests",
            dependencies: ["MITMPins", "MITMTLS", "MITMCore"],
            exclude: ["Samples"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
