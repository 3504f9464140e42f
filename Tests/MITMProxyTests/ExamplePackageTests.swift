import Foundation
import Testing

/// Examples/PinningTests, the package a team writes: it depends on mitm-proxy by URL and version, and the README
/// shows its test as it is.
@Suite(.tags(.live), .skippedInFastTier) struct ExamplePackageTests {
    private static let exampleTest =
        RepositoryLayout.root + "/Examples/PinningTests/Tests/PinningTests/PinningTests.swift"

    /// SwiftPM refuses a dependency by version whose product has a target with unsafe flags while it loads the package
    /// graph, before building anything: resolving the example against a tagged bare clone of the checkout shows it in
    /// seconds (CI's scripts/test-example also builds the example and runs its tests, which takes minutes).
    @Test func aPackageCanDependOnTheLibraryByVersion() async throws {
        let result = try await Subprocess.run(
            "/bin/bash", [RepositoryLayout.root + "/scripts/test-example", "--resolve"],
            timeout: .seconds(300))
        #expect(result.succeeded, "\(result.stderrText)")
        #expect(!result.stderrText.contains("unsafe build flags"))
        #expect(
            result.stdoutText.contains("mitm-proxy<file://"),
            "the example resolved the tagged clone: \(result.stdoutText)")
    }

    @Test func theReadmeShowsTheExamplesTestAsItIs() throws {
        let readme = try String(contentsOfFile: RepositoryLayout.root + "/README.md", encoding: .utf8)
        let test = try String(contentsOfFile: Self.exampleTest, encoding: .utf8)
        let section = try #require(readme.range(of: "### In a Swift test").map { readme[$0.lowerBound...] })
        #expect(
            section.contains("```swift\n" + test + "```\n"),
            "README.md's \"In a Swift test\" differs from \(Self.exampleTest)")
    }
}
