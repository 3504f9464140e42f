// swift-tools-version: 6.0
import PackageDescription
#if os(Linux)
import Glibc
#endif

/// Release builds on Linux link the Swift runtime, Foundation and Dispatch into the binary (`-static-stdlib`):
/// only the pages the proxy touches become resident, instead of every shared library's pages (31 MiB of RSS
/// at idle with the shared libraries, 22-24 MiB static; bench/README.md, "A lighter process"). The binary then
/// needs only the system's libc, libstdc++, OpenSSL, nghttp2 and zlib at run time. With glibc 2.36
/// or later (Debian 12) the toolchain's lld also packs the relative relocations (`DT_RELR`, 2 MiB of
/// relocation entries read at every start become a few KiB): -1.3 MiB more. Older glibc cannot load such
/// a binary, so there the default linker is used.
/// lld also lays the functions the proxy runs out together at the start of .text (`LinkOrder.txt`, written by
/// bench/link_order.py from whole-life profiles): the kernel maps code into the resident set in whole page-cache
/// folios, and the 1 MiB of code that runs, scattered over 18 MiB, made 9.2 MiB of it resident (bench/README.md,
/// "Code that runs, together"). The toolchain's static-stdlib link arguments export every symbol of our own objects
/// (8,500 dynamic symbols nothing looks up; the static libraries' are excluded already): `--no-export-dynamic`
/// keeps their 0.6 MiB of names and hash tables out of the resident set.
let linkOrderFile = Context.packageDirectory + "/Sources/mitm-proxy/LinkOrder.txt"
let releaseLinkFlags: [String] = {
    #if os(Linux)
    var text = [CChar](repeating: 0, count: 64)  // "glibc 2.36"
    _ = confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count)
    let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let version = name.split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
    let packsRelocations = version.count >= 2 && (version[0], version[1]) >= (2, 36)
    return ["-static-stdlib"]
        + (packsRelocations ? ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                               "-Xlinker", "--symbol-ordering-file=\(linkOrderFile)",
                               "-Xlinker", "--no-warn-symbol-ordering", "-Xlinker", "--no-export-dynamic"] : [])
    #else
    return []
    #endif
}()
/// `-static-stdlib` also at compile time, as `swift build --static-swift-stdlib` does: it selects the static
/// Foundation modules, whose link entries name their helper libraries.
/// Release builds also drop the run-time exclusivity checks (`swift_beginAccess` on every class property access: 3% of
/// a keep-alive request's instructions); debug builds, which the tests run, keep them and trap on a violation.
let releaseSwiftSettings: [SwiftSetting] = [
    .unsafeFlags(releaseLinkFlags.isEmpty ? [] : ["-static-stdlib"], .when(platforms: [.linux], configuration: .release)),
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

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
        .target(name: "MITMCore", dependencies: ["CZlib"], swiftSettings: releaseSwiftSettings),
        .target(name: "MITMTLS", dependencies: ["COpenSSL", "CMITMShims", "MITMCore"], swiftSettings: releaseSwiftSettings),
        .target(name: "MITMIO", dependencies: ["CMITMShims"], swiftSettings: releaseSwiftSettings),
        .target(name: "MITMHTTP2", dependencies: ["CNGHTTP2", "MITMCore"], swiftSettings: releaseSwiftSettings),
        .target(
            name: "MITMProxy",
            dependencies: ["MITMCore", "MITMTLS", "MITMIO", "MITMHTTP2", "CNGHTTP2",
                           .product(name: "Yams", package: "Yams")],
            // The web UI's files, compiled into the binary: nothing to install beside it, nothing fetched at run time.
            // The table of known TLS client fingerprints, data kept beside the code (one line per fingerprint).
            resources: [.embedInCode("Web/index.html"), .embedInCode("Web/app.js"), .embedInCode("Web/board.css"),
                        .embedInCode("KnownClients.txt")],
            swiftSettings: releaseSwiftSettings
        ),
        .target(
            name: "MITMPins",
            dependencies: ["MITMCore", "MITMTLS", "COpenSSL", "CMITMShims"],
            swiftSettings: releaseSwiftSettings
        ),
        .executableTarget(
            name: "mitm-proxy",
            dependencies: [
                "MITMProxy",
                "MITMPins",
                "CMITMShims",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["LinkOrder.txt"],
            swiftSettings: releaseSwiftSettings,
            linkerSettings: [.unsafeFlags(releaseLinkFlags, .when(platforms: [.linux], configuration: .release))]
        ),
        .testTarget(name: "MITMCoreTests", dependencies: ["MITMCore"]),
        .testTarget(name: "MITMTLSTests", dependencies: ["MITMTLS", "MITMCore"]),
        .testTarget(name: "MITMHTTP2Tests", dependencies: ["MITMHTTP2", "MITMCore"]),
        .testTarget(name: "MITMIOTests", dependencies: ["MITMIO"]),
        .testTarget(
            name: "MITMProxyTests",
            dependencies: ["MITMProxy", "MITMTLS", "MITMCore", "MITMHTTP2", "CMITMShims"],
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
