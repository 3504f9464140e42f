import Foundation
import Testing

/// One CA per directory, with real processes.
@Suite(.tags(.live), .skippedInFastTier) struct CADirectoryLockTests {
    private func fingerprint(in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix("SHA-256:") }.map {
            String($0.dropFirst(8)).trimmingCharacters(in: .whitespaces)
        }
    }

    @Test func processesStartedAtOnceOnAnEmptyDirectoryShareOneCA() async throws {
        let binary = try BuiltBinary.path()
        for _ in 0..<3 {
            let directory = TemporaryDirectory.path("shared-ca")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let results: [SubprocessResult] = try await withThrowingTaskGroup(of: SubprocessResult.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await Subprocess.run(binary, ["ca", "path", "--ca-dir", directory], timeout: .seconds(30))
                    }
                }
                var all: [SubprocessResult] = []
                for try await result in group { all.append(result) }
                return all
            }
            let printed = Set(results.map { fingerprint(in: $0.stdoutText) })
            #expect(results.allSatisfy { $0.succeeded }, "\(results)")
            #expect(printed.count == 1, "every process must serve the same CA: \(printed)")
            let onDisk = try await Subprocess.run(binary, ["ca", "path", "--ca-dir", directory])
            #expect(printed == [fingerprint(in: onDisk.stdoutText)], "the CA in ca.pem is the one served")
        }
    }

    @Test func regeneratingTheCAOfARunningProxyIsRefusedOrWarned() async throws {
        let proxy = try await ProxyProcess.start()
        let binary = try BuiltBinary.path()
        let refused = try await Subprocess.run(binary, ["ca", "regenerate", "--ca-dir", proxy.caDirectory])
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.stderrText.contains("a running mitm-proxy uses the CA in \(proxy.caDirectory)"), "\(refused)")
        let forced = try await Subprocess.run(binary, ["ca", "regenerate", "--force", "--ca-dir", proxy.caDirectory])
        #expect(forced.succeeded, "\(forced)")
        #expect(
            forced.stderrText.contains(
                "warning: a running mitm-proxy uses \(proxy.caDirectory): it keeps serving the OLD CA"), "\(forced)")
        await proxy.stop()
    }
}
