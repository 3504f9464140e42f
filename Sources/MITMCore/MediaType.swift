/// The `Content-Type` a map-local file is served with, from its extension.
package enum MediaType {
    /// `application/json` for `x.json`; `application/octet-stream` for an unknown extension.
    package static func forFile(_ path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return fallback }
        return byExtension[name[name.index(after: dot)...].lowercased()] ?? fallback
    }

    static let fallback = "application/octet-stream"

    static let byExtension: [String: String] = [
        "json": "application/json", "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8", "css": "text/css; charset=utf-8",
        "txt": "text/plain; charset=utf-8", "csv": "text/csv; charset=utf-8", "xml": "application/xml",
        "yaml": "application/yaml", "yml": "application/yaml", "md": "text/markdown; charset=utf-8",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "svg": "image/svg+xml", "ico": "image/x-icon", "avif": "image/avif", "heic": "image/heic",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "wasm": "application/wasm",
        "mp4": "video/mp4", "webm": "video/webm", "mp3": "audio/mpeg", "m4a": "audio/mp4",
        "m3u8": "application/vnd.apple.mpegurl",
        "ts": "video/mp2t", "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
        "plist": "application/x-plist", "pem": "application/x-pem-file", "cer": "application/pkix-cert",
        "pb": "application/x-protobuf", "bin": "application/octet-stream",
    ]
}
