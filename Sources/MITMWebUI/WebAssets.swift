/// The page's files: plain HTML, CSS and JavaScript in `Sources/MITMWebUI/Assets`, compiled into the binary
/// (SwiftPM `embedInCode`), so the single `mitm-proxy` file serves them wherever it is copied; nothing is fetched
/// from anywhere else.
enum WebAssets {
    /// A file the page loads.
    struct File {
        let contentType: String
        let bytes: [UInt8]
    }

    /// `index.html`.
    static var page: [UInt8] { PackageResources.index_html }

    /// The file served at `path`, if it is one of the page's.
    static func file(at path: String) -> File? {
        switch path {
        case "/app.js": File(contentType: "text/javascript; charset=utf-8", bytes: PackageResources.app_js)
        case "/board.css": File(contentType: "text/css; charset=utf-8", bytes: PackageResources.board_css)
        case "/act.js": File(contentType: "text/javascript; charset=utf-8", bytes: PackageResources.act_js)
        case "/act.css": File(contentType: "text/css; charset=utf-8", bytes: PackageResources.act_css)
        default: nil
        }
    }
}
