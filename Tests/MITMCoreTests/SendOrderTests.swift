import Foundation
import MITMCore
import Testing

/// What the web UI's resend and compose make of an order: the kept flow's request, changed as asked, with the
/// connection's own fields left to the connection.
@Suite struct SendOrderTests {
    private func flow(body: String, keep: Int = 1024) -> Flow {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "api.test")
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Proxy-Authorization", value: "Basic c2VjcmV0")
        var record = ExchangeRecord(
            connectionID: 1, scheme: "https", host: "api.test", port: 443,
            request: HTTPRequestHead(method: "POST", target: "/v1/items", headers: headers),
            started: Date(), finished: Date())
        record.requestBody = CapturedBody(limit: keep)
        record.requestBody.append(Array(body.utf8))
        record.requestBodyBytes = body.utf8.count
        return Flow(id: 7, content: .exchange(record))
    }

    @Test func aReplayIsTheKeptRequestAsItWas() throws {
        let made = try SendOrder(flow: 7).request(original: flow(body: #"{"a":1}"#)).get()
        #expect(made.head.method == "POST")
        #expect(made.head.target == "https://api.test/v1/items")
        #expect(made.head.headers.values("host") == ["api.test"])
        #expect(made.head.headers.first("content-type") == "application/json")
        #expect(!made.head.headers.contains("content-length") && !made.head.headers.contains("proxy-authorization"))
        #expect(made.body == Array(#"{"a":1}"#.utf8))
    }

    @Test func anEditChangesWhatItNames() throws {
        let order = SendOrder(
            flow: 7, method: "put", url: "https://api.test:8443/v2/items?x=1", headers: [["X-Edited", "yes"]],
            body: "new")
        let made = try order.request(original: flow(body: "old")).get()
        #expect(made.head.method == "PUT")
        #expect(made.head.target == "https://api.test:8443/v2/items?x=1")
        #expect(made.head.headers.fields.map(\.name) == ["Host", "X-Edited"])
        #expect(made.head.headers.first("host") == "api.test:8443")
        #expect(made.body == Array("new".utf8))
    }

    @Test func whatCannotBeSentIsSaid() {
        #expect(SendOrder(flow: 7).request(original: nil).failure?.status == 404)
        #expect(
            SendOrder(flow: 7).request(original: flow(body: "0123456789", keep: 4)).failure?.message.contains(
                "was not kept whole") == true)
        #expect(
            SendOrder(method: "GET").request(original: nil).failure?.message
                == "a composed request needs a method and a URL")
        #expect(SendOrder(method: "GET", url: "ftp://x.test/").request(original: nil).failure?.status == 400)
        #expect(
            SendOrder(method: "GET", url: "http://x.test/", headers: [["X-A", "a\nb"]]).request(original: nil).failure?
                .message
                == "the value of header X-A contains a line break or control character")
        #expect(SendOrder(method: "CONNECT", url: "http://x.test/").request(original: nil).failure?.status == 400)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
