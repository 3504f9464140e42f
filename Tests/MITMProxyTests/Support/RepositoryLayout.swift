/// Paths inside the repository, found from this file's location so tests need no bundled resources.
enum RepositoryLayout {
    /// The repository root: this file is `Tests/MITMProxyTests/Support/RepositoryLayout.swift`.
    static let root: String = {
        var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(4)
        return components.joined(separator: "/")
    }()

    /// `certs/make-test-pki.sh`.
    static let testPKIScript = root + "/certs/make-test-pki.sh"

    /// `Tests/MITMProxyTests/Fixtures`.
    static let fixtures = root + "/Tests/MITMProxyTests/Fixtures"

    /// `Tests/MITMProxyTests/Fixtures/origin.py`.
    static let originScript = fixtures + "/origin.py"
    /// The `mitm-proxy` executable built beside the test bundle (`swift build --build-tests` builds it).
    static let builtExecutable: String = {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return testBinary.deletingLastPathComponent().appendingPathComponent("mitm-proxy").path
    }()
}

import Foundation
