import Foundation

/// Debian's headless Chromium, which the web UI tests drive through Selenium and chromium-driver.
enum Chromium {
    /// Whether Chromium starts at all here (`scripts/install-deps test` installs it, so CI always has it); the
    /// browser tests are skipped only when it does not, with the reason this gives.
    static let startProblem: String? = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            return "no /usr/bin/chromium (scripts/install-deps test installs chromium and chromium-driver)"
        }
        let profile = TemporaryDirectory.path("chromium-probe")
        defer { try? FileManager.default.removeItem(atPath: profile) }
        // Blocking, once per process: the suites' `.enabled(if:)` condition that reads this is synchronous.
        let result = try? Subprocess.runBlocking(
            "/usr/bin/chromium",
            [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--user-data-dir=" + profile,
                "--dump-dom", "about:blank",
            ], timeout: .seconds(60))
        guard let result else { return "chromium could not be run" }
        guard result.succeeded, result.stdoutText.contains("<html") else {
            return "chromium does not start: \(result.description)"
        }
        return nil
    }()

    /// Whether the browser tests can run; says why not on stderr when they cannot.
    static var starts: Bool {
        guard let startProblem else { return true }
        FileHandle.standardError.write(Data("web UI browser tests skipped: \(startProblem)\n".utf8))
        return false
    }

    /// Where screenshots taken by the browser tests go: `docs/` when `MITM_PROXY_UPDATE_SCREENSHOTS=1` (to refresh the
    /// README's pictures), otherwise a folder under `.build` so that a test run leaves the work tree as it was.
    static var screenshotDirectory: String {
        if ProcessInfo.processInfo.environment["MITM_PROXY_UPDATE_SCREENSHOTS"] == "1" {
            return RepositoryLayout.root + "/docs"
        }
        let directory = RepositoryLayout.root + "/.build/web-ui-screenshots"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }
}
