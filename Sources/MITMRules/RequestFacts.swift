import MITMCore

/// What rules match a request by: known once its head has arrived.
public struct RequestFacts: Sendable, Equatable {
    /// `http` or `https`.
    public var scheme: String
    /// The host the client asked for (SNI or CONNECT host for intercepted traffic, the URL's host for plain HTTP).
    public var host: String
    /// The port the client asked for.
    public var port: Int
    /// The method.
    public var method: String
    /// The path and query (`/v1/items?page=2`).
    public var target: String

    /// The facts of one request.
    public init(scheme: String, host: String, port: Int, method: String, target: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.method = method
        self.target = target
    }

    /// The path without the query.
    public var path: String {
        target.firstIndex(of: "?").map { String(target[..<$0]) } ?? target
    }

    /// The query with its `?`, or empty.
    public var query: String {
        target.firstIndex(of: "?").map { String(target[$0...]) } ?? ""
    }
}
