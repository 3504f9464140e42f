import MITMCore
import Testing

@testable import MITMWebUI

/// The web UI's one check against cross-site request forgery.
@Suite struct CrossSiteRequestCheckTests {
    @Test func aPostWithoutTheUIsHeaderIsRefusedAndSaysWhy() {
        let refusal = CrossSiteRequestCheck.refusal(
            method: "POST", path: "/api/clear", headers: ["Content-Type": "text/plain"])
        #expect(refusal == "POST /api/clear needs the X-Mitm-Proxy-UI header (the page sends it)")
    }

    @Test func thePagesPostsAndEveryReadGoOn() {
        #expect(
            CrossSiteRequestCheck.refusal(method: "POST", path: "/api/clear", headers: ["x-mitm-proxy-ui": "1"]) == nil)
        #expect(CrossSiteRequestCheck.refusal(method: "GET", path: "/api/flows", headers: [:]) == nil)
    }
}
