import MITMCore
import MITMTLS

/// The proxy's own web pages, reached at `http://mitm.proxy/` through the proxy or at the proxy's
/// address directly: how a phone downloads the CA certificate.
enum LocalPages {
    /// The host name that always means the proxy itself.
    static let host = "mitm.proxy"

    static func handles(host: String) -> Bool { host == Self.host }

    static func response(for path: String, request: HTTPRequestHead, authority: CertificateAuthority) -> LocalResponse {
        let route = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        switch route {
        case "/", "/index.html":
            return LocalResponse(status: 200, reasonPhrase: "OK", contentType: "text/html; charset=utf-8",
                                 body: Array(indexPage(authority: authority).utf8), reasonText: "")
        case "/ca.pem", "/ca.crt":
            return LocalResponse(status: 200, reasonPhrase: "OK", contentType: "application/x-x509-ca-cert",
                                 body: Array(authority.certificate.pem.utf8), reasonText: "")
        case "/trusted":
            // Fetched over https://mitm.proxy/ by the index page: it loads only if the device trusts the CA.
            return LocalResponse(status: 200, reasonPhrase: "OK", contentType: "text/plain; charset=utf-8",
                                 body: Array("this client trusts the mitm-proxy CA\n".utf8), reasonText: "")
        case "/ca.cer":
            return LocalResponse(status: 200, reasonPhrase: "OK", contentType: "application/pkix-cert",
                                 body: authority.certificate.der, reasonText: "")
        default:
            return .error(status: 404, reason: "no page \(route) here; the CA certificate is at /ca.pem and /ca.cer")
        }
    }

    private static func indexPage(authority: CertificateAuthority) -> String {
        let name = authority.certificate.commonName ?? "mitm-proxy CA"
        return """
        <!doctype html>
        <html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>mitm-proxy CA</title></head>
        <body style="font-family: -apple-system, sans-serif; max-width: 40em; margin: 2em auto; padding: 0 1em">
        <h1>mitm-proxy</h1>
        <p>This device is using mitm-proxy. To let it intercept HTTPS, install its CA certificate
        <b>\(name)</b> (SHA-256 \(authority.certificate.fingerprintSHA256)).</p>
        <ul>
        <li><a href="/ca.pem">ca.pem</a> &mdash; iOS (then Settings &rarr; General &rarr; VPN &amp; Device Management, and
        Settings &rarr; General &rarr; About &rarr; Certificate Trust Settings), macOS, Linux</li>
        <li><a href="/ca.cer">ca.cer</a> &mdash; Android (Settings &rarr; Security &rarr; Encryption &amp; credentials &rarr;
        Install a certificate &rarr; CA certificate), Windows</li>
        </ul>
        <p>Only install it on test devices, and remove it when you are done testing.</p>
        <p id="trust">Checking whether this device already trusts the CA&hellip;
        (<a href="https://\(host)/">https://\(host)/</a> loads only when it does)</p>
        <script>
        fetch("https://\(host)/trusted", {mode: "no-cors", cache: "no-store"}).then(function () {
          document.getElementById("trust").innerHTML = "&#10004; This device trusts the CA: the proxy can intercept its HTTPS.";
        }, function () {
          document.getElementById("trust").innerHTML = "&#10008; This device does not trust the CA yet: install it above, then reload this page.";
        });
        </script>
        </body></html>
        """
    }
}
