import Foundation

/// Paths inside the repository, found from this file's location so tests need no bundled resources.
enum RepositoryLayout {
    /// The repository root: this file is `Tests/MITMProxyTests/Support/RepositoryLayout.swift`.
    static let root: String = {
        var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(4)
        return components.joined(separator: "/")
    }()

    /// `Tests/MITMProxyTests/Fixtures`.
    static let fixtures = root + "/Tests/MITMProxyTests/Fixtures"

    /// `Tests/MITMProxyTests/Fixtures/origin.py`.
    static let originScript = fixtures + "/origin.py"

    /// `Tests/MITMProxyTests/Fixtures/h2_origin.py`, the HTTP/2 origin.
    static let h2OriginScript = fixtures + "/h2_origin.py"

    /// `Tests/MITMProxyTests/Fixtures/h2_client.py`, the scripted HTTP/2 client.
    static let h2ClientScript = fixtures + "/h2_client.py"

    /// `Tests/MITMProxyTests/Fixtures/ws_origin.py`, the TLS WebSocket echo origin.
    static let webSocketOriginScript = fixtures + "/ws_origin.py"

    /// `Tests/MITMProxyTests/Fixtures/ws_client.py`, the WebSocket client (HTTP/1.1, or RFC 8441 with `--h2`).
    static let webSocketClientScript = fixtures + "/ws_client.py"

    /// `Tests/MITMProxyTests/Fixtures/H2JavaClient.java`, Java's HttpClient asking for HTTP/2.
    static let h2JavaClient = fixtures + "/H2JavaClient.java"

    /// `Tests/MITMProxyTests/Fixtures/H2OkHttpClient.java`, OkHttp as Android apps use it.
    static let h2OkHttpClient = fixtures + "/H2OkHttpClient.java"

    /// `Tests/MITMProxyTests/Fixtures/h2_go_client.go`, Go's net/http client.
    static let h2GoClient = fixtures + "/h2_go_client.go"

    /// The `mitm-proxy` executable built beside the test bundle (`swift build --build-tests` builds it).
    static let builtExecutable: String = {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return testBinary.deletingLastPathComponent().appendingPathComponent("mitm-proxy").path
    }()
}
