/// Reason phrases of the statuses the proxy answers with itself: its errors and its own pages, the web UI's too.
package enum HTTPReasonPhrase {
    package static let proxyAnswers: [Int: String] = [
        200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 407: "Proxy Authentication Required",
        405: "Method Not Allowed", 408: "Request Timeout",
        421: "Misdirected Request", 431: "Request Header Fields Too Large", 501: "Not Implemented", 502: "Bad Gateway",
        504: "Gateway Timeout",
        505: "HTTP Version Not Supported", 508: "Loop Detected",
    ]
}
