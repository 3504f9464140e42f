import Foundation

extension OriginServer {
    /// Every request the origin received so far, as `METHOD /path`, asked directly (not through a proxy).
    func requestsSeen() async throws -> [String] {
        let pki = try await TestPKI.shared()
        var arguments = ["-sS", "--max-time", "10", url("/seen", hostname: "localhost")]
        if case .tls = transport { arguments += ["--cacert", pki.root] }
        let result = try await Subprocess.run("curl", arguments)
        guard result.succeeded, let list = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String]
        else {
            throw SubprocessError(description: "cannot read the origin's /seen: \(result)")
        }
        return list
    }
}
