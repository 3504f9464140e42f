import Foundation
import Testing

/// What a QA engineer keeps the web UI open for, in headless Chromium (Fixtures/web_ui_features.py) against the real
/// binary with curl and a WebSocket client: the filter language over bodies, a rule's answer marked, sorting, the
/// start order, rounded timings, a WebSocket's messages live, compare, mute, and dark mode.
@Suite(.serialized, .enabled(if: Chromium.starts, "needs Chromium that starts (scripts/install-deps test installs it)"))
struct WebUIFeatureBrowserTests {
    struct Colours: Decodable {
        let back: [Int]
        let textContrast: Double
        let mutedContrast: Double
        let badgeContrast: Double?
    }

    struct Observed: Decodable {
        let teapotBody: String
        let byResponseBody: [String]
        let byRequestBody: [String]
        let byStatus: [String]
        let combined: [String]
        let filterError: String
        let filterErrorDescribes: String
        let byPlainText: [String]
        let teapotRow: String
        let teapotDetail: String
        let startOrdered: Bool
        let tunnelPlacedByStart: Bool
        let rowsByTime: [String]
        let rowsBySize: [String]
        let sizesAscending: [Int]
        let sizesDescending: [Int]
        let timings: String
        let compareTitle: String
        let compareDiffers: [String]
        let compareBodies: Int
        let echo1: String
        let wsOpenState: String
        let wsClosedState: String
        let wsMessages: [[String]]
        let wsRow: String
        let malformedShown: String
        let mutedBoardHosts: [String]
        let mutedListCount: Int
        let unmutedListCount: Int
        let lightColours: Colours
        let darkColours: Colours
    }

    @Test func filterRuleMarksSortingWebSocketsCompareMuteAndDarkMode() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let webSockets = try await OriginServer.start(
            .tls(.origin), script: RepositoryLayout.webSocketOriginScript, extraArguments: ["--no-compression"])
        let plain = try await OriginServer.start(.plainHTTP)
        let run = try await ProxyProcess.running([
            "--resolve", "origin.test:127.0.0.1", "--respond", "origin.test/teapot=418",
        ]) { proxy in
            try await Subprocess.run(
                "/usr/bin/env",
                [
                    "python3", RepositoryLayout.fixtures + "/web_ui_features.py", "--proxy-port", String(proxy.port),
                    "--ca", proxy.caDirectory + "/ca.pem", "--origin-port", String(origin.port), "--ws-port",
                    String(webSockets.port),
                    "--plain-port", String(plain.port),
                    "--screenshots", Chromium.screenshotDirectory,
                ], timeout: .seconds(150))
        }
        await origin.stop()
        await webSockets.stop()
        await plain.stop()
        try #require(run.succeeded, "the browser run failed: \(run)")
        let seen = try JSONDecoder().decode(Observed.self, from: Data(run.stdout))
        let base = "https://origin.test:\(origin.port)"

        // The filter language finds a value in a response body and in a request body, a status, a combination.
        #expect(seen.byResponseBody == ["\(base)/headers"], "\(seen.byResponseBody)")
        #expect(seen.byRequestBody == ["\(base)/digest"], "\(seen.byRequestBody)")
        #expect(seen.byStatus == ["\(base)/teapot"], "\(seen.byStatus)")
        #expect(seen.combined == ["\(base)/digest"], "\(seen.combined)")
        #expect(seen.filterError.contains("& needs a filter after it (at character 8)"), "\(seen.filterError)")
        #expect(seen.filterError.contains("~c 4xx &\n       ^"), "a caret under the mistake: \(seen.filterError)")
        #expect(seen.filterErrorDescribes.contains("filter-error"), "the field names its error for screen readers")
        #expect(seen.byPlainText == ["\(base)/hello"], "text without ~ filters as before: \(seen.byPlainText)")

        // A rule's answer is marked, and no origin address is claimed for it.
        #expect(seen.teapotBody.contains("418"))
        #expect(seen.teapotRow.contains("418") && seen.teapotRow.contains("rule answer"), "\(seen.teapotRow)")
        #expect(
            seen.teapotDetail.contains("Answered by rule") && seen.teapotDetail.contains("answered 418"),
            "\(seen.teapotDetail)")
        #expect(seen.teapotDetail.contains("no origin server was contacted"))
        #expect(seen.teapotDetail.contains("Server address\nnone (answered by the rule)"), "\(seen.teapotDetail)")
        #expect(
            !seen.teapotDetail.contains("Server address\n127.0.0.1"), "no server address for a response no server sent")

        // Newest start first by default; a click on Size sorts by size, a second click reverses it.
        #expect(seen.startOrdered)
        #expect(seen.tunnelPlacedByStart, "a tunnel is placed by when it was accepted, not when it ended")
        #expect(seen.sizesAscending == seen.sizesAscending.sorted(), "\(seen.sizesAscending)")
        #expect(seen.sizesDescending == seen.sizesAscending.sorted().reversed(), "\(seen.sizesDescending)")
        #expect(seen.rowsBySize != seen.rowsByTime, "the rows were reordered")

        // Timings with at most 3 decimals.
        let decimals = seen.timings.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { word -> Int? in
            guard Double(word) != nil, let dot = word.firstIndex(of: ".") else { return nil }
            return word.distance(from: dot, to: word.endIndex) - 1
        }
        #expect(decimals.allSatisfy { $0 <= 3 }, "\(seen.timings)")
        #expect(seen.timings.contains("DNS") && seen.timings.contains("Total"), "\(seen.timings)")

        // Compare: the two flows side by side, their differences marked.
        #expect(seen.compareTitle.hasPrefix("Compare #"), "\(seen.compareTitle)")
        #expect(
            seen.compareDiffers.contains { $0.hasPrefix("url") }
                && seen.compareDiffers.contains { $0.hasPrefix("content-type") },
            "\(seen.compareDiffers)")
        #expect(seen.compareBodies >= 2, "the response bodies side by side")

        // The WebSocket: its messages arrived in the open detail as they passed, then its close.
        #expect(seen.echo1 == "ws-hello-1")
        #expect(seen.wsOpenState.contains("open"), "\(seen.wsOpenState)")
        #expect(
            seen.wsClosedState.contains("closed") && seen.wsClosedState.contains("1000")
                && seen.wsClosedState.contains("bye"),
            "\(seen.wsClosedState)")
        #expect(seen.wsMessages.count == 6, "two texts, two binaries and two close frames: \(seen.wsMessages)")
        let first = try #require(seen.wsMessages.first)
        #expect(
            first[1].contains("client") && first[3] == "text (1)" && first[4].hasPrefix("10 B")
                && first[5] == "ws-hello-1", "\(first)")
        #expect(seen.wsMessages[1][1].contains("server") && seen.wsMessages[1][5] == "ws-hello-1")
        #expect(
            seen.wsMessages[2][3] == "binary (2)" && seen.wsMessages[2][5].contains("00 01 fe ff"),
            "binary as hex: \(seen.wsMessages[2])")
        #expect(
            seen.wsMessages[4][3] == "close (8)" && seen.wsMessages[4][5].contains("close 1000")
                && seen.wsMessages[4][5].contains("bye"),
            "\(seen.wsMessages[4])")
        #expect(
            seen.wsRow.contains("101") && seen.wsRow.contains("6 msg") && !seen.wsRow.contains(" 0 B"),
            "sized by its messages: \(seen.wsRow)")
        #expect(
            seen.malformedShown.contains("malformed: a frame from the client must be masked"), "\(seen.malformedShown)")

        // Muting a host hides it on the board and in the list until it is unmuted.
        #expect(!seen.mutedBoardHosts.contains("origin.test"), "\(seen.mutedBoardHosts)")
        #expect(
            seen.mutedListCount == 0 && seen.unmutedListCount > 0, "\(seen.mutedListCount) \(seen.unmutedListCount)")

        // Dark mode follows the system, readable in both.
        #expect(seen.lightColours.back == [255, 255, 255])
        #expect(seen.darkColours.back.allSatisfy { $0 < 40 }, "a dark background: \(seen.darkColours.back)")
        for colours in [seen.lightColours, seen.darkColours] {
            #expect(colours.textContrast >= 7 && colours.mutedContrast >= 4.5, "\(colours)")
            #expect((colours.badgeContrast ?? 7) >= 4.5, "\(colours)")
        }
    }
}
