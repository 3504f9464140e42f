// swift-tools-version: 6.0
import PackageDescription

#if os(Linux)
import Glibc
#endif

/// The `mitm-proxy` executable's release tuning (bench/README.md, "A lighter process" and "Code that runs, together").
/// SwiftPM refuses a dependency by version on a package whose product has a target with `unsafeFlags` ("contains
/// unsafe build flags"), so no target of the `MITMProxy` library carries any: what applies to every module is in the
/// build command, `scripts/build-release` (`--static-swift-stdlib`: the Swift runtime, Foundation and Dispatch linked
/// into the binary, so only the pages the proxy touches become resident; `-enforce-exclusivity=unchecked`: no run-time
/// exclusivity checks, 3% of a keep-alive request's instructions; debug builds, which the tests run, keep them and trap
/// on a violation). What only the executable's link needs stays here, where it does not reach a package that uses
/// only the library product.
/// With glibc 2.36 or later (Debian 12) the toolchain's lld packs the relative relocations (`DT_RELR`, 2 MiB of
/// relocation entries read at every start become a few KiB): -1.3 MiB. Older glibc cannot load such a binary, so
/// there the default linker is used.
/// lld also lays the functions the proxy runs out together at the start of .text (`LinkOrder.txt`, written by
/// bench/link_order.py from whole-life profiles): the kernel maps code into the resident set in whole page-cache
/// folios, and the 1 MiB of code that runs, scattered over 18 MiB, made 9.2 MiB of it resident. The toolchain's
/// static-stdlib link arguments export every symbol of our own objects (8,500 dynamic symbols nothing looks up; the
/// static libraries' are excluded already): `--no-export-dynamic` keeps their 0.6 MiB of names and hash tables out of
/// the resident set.
let linkOrderFile = Context.packageDirectory + "/Sources/mitm-proxy/LinkOrder.txt"
let executableReleaseLinkFlags: [String] = {
    #if os(Linux)
    var text = [CChar](repeating: 0, count: 64)  // "glibc 2.36"
    _ = confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count)
    let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let version = name.split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
    guard version.count >= 2 && (version[0], version[1]) >= (2, 36) else { return [] }
    return [
        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
        "-Xlinker", "--symbol-ordering-file=\(linkOrderFile)",
        "-Xlinker", "--no-warn-symbol-ordering", "-Xlinker", "--no-export-dynamic",
    ]
    #else
    return []
    #endif
}()

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
        // The system calls Swift cannot reach directly; the I/O layer needs nothing else, OpenSSL's headers included.
        .target(name: "CMITMShims", cSettings: [.define("_GNU_SOURCE")]),
        .target(
            name: "CMITMTLSShims",
            dependencies: ["COpenSSL"],
            cSettings: [.define("OPENSSL_SUPPRESS_DEPRECATED")]
        ),
        .target(name: "MITMCore", dependencies: ["CZlib"]),
        .target(name: "MITMTLS", dependencies: ["COpenSSL", "CMITMTLSShims", "MITMCore"]),
        .target(name: "MITMIO", dependencies: ["CMITMShims"]),
        .target(name: "MITMHTTP2", dependencies: ["CNGHTTP2", "MITMCore"]),
        // The QA rules: their model, the rules file (YAML, read with Yams), matching, and the machine that applies
        // a decision to one exchange.
        .target(name: "MITMRules", dependencies: ["MITMCore", .product(name: "Yams", package: "Yams")]),
        // The run's records: the recording queue that carries every event to its subscribers, and the outputs that
        // subscribe (console lines, `--events`, `--har`, `--report`). It knows events, not the proxy that makes them.
        .target(name: "MITMRecording", dependencies: ["MITMCore"]),
        // The web UI: its page and files, the answers to the page, the live feeds, and its connections, served on the
        // byte stream the proxy accepted. It acts on the proxy through `WebUIEngine`, which the engine implements.
        .target(
            name: "MITMWebUI",
            dependencies: ["MITMCore", "MITMIO", "MITMRules"],
            // The page's files, compiled into the binary: nothing to install beside it, nothing fetched at run time.
            resources: [
                .embedInCode("Assets/index.html"), .embedInCode("Assets/app.js"), .embedInCode("Assets/board.css"),
                .embedInCode("Assets/act.js"), .embedInCode("Assets/act.css"),
            ]
        ),
        .target(
            name: "MITMProxy",
            dependencies: [
                "MITMCore", "MITMTLS", "MITMIO", "MITMHTTP2", "MITMRules", "MITMRecording", "MITMWebUI", "CNGHTTP2",
            ],
            // The table of known TLS client fingerprints, data kept beside the code (one line per fingerprint).
            resources: [.embedInCode("Identity/KnownClients.txt")]
        ),
        .target(
            name: "MITMPins",
            dependencies: ["MITMCore", "MITMTLS", "COpenSSL", "CMITMShims"]
        ),
        .executableTarget(
            name: "mitm-proxy",
            dependencies: [
                "MITMProxy",
                "MITMRules",
                "MITMRecording",
                "MITMPins",
                "CMITMShims",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["LinkOrder.txt"],
            // Allowed here: a package that depends on this one by version uses only the library product.
            linkerSettings: [
                .unsafeFlags(executableReleaseLinkFlags, .when(platforms: [.linux], configuration: .release))
            ]
        ),
        // What every test target shares: the subprocess runner, the test PKI, temporary directories, polling.
        // Part of no product: a package that depends on this one never builds it.
        .target(name: "TestSupport", dependencies: ["CMITMShims"], path: "Tests/TestSupport"),
        .testTarget(name: "MITMCoreTests", dependencies: ["MITMCore", "TestSupport"]),
        .testTarget(name: "MITMTLSTests", dependencies: ["MITMTLS", "MITMCore", "TestSupport"]),
        .testTarget(name: "MITMHTTP2Tests", dependencies: ["MITMHTTP2", "MITMCore"]),
        .testTarget(name: "MITMIOTests", dependencies: ["MITMIO", "TestSupport"]),
        .testTarget(name: "MITMRulesTests", dependencies: ["MITMRules", "MITMCore", "TestSupport"]),
        .testTarget(name: "MITMRecordingTests", dependencies: ["MITMRecording", "MITMCore", "TestSupport"]),
        .testTarget(name: "MITMWebUITests", dependencies: ["MITMWebUI", "MITMRules", "MITMCore", "MITMIO"]),
        .testTarget(
            name: "MITMProxyTests",
            dependencies: [
                "MITMProxy", "MITMTLS", "MITMCore", "MITMHTTP2", "MITMRules", "MITMRecording", "MITMWebUI",
                "CMITMShims", "TestSupport",
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "MITMPinsTests",
            dependencies: ["MITMPins", "MITMTLS", "MITMCore", "TestSupport"],
            exclude: ["Samples"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
