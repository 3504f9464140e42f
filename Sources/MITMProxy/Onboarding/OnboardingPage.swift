import MITMCore
import MITMTLS

/// `http://mitm.proxy/`: the CA's downloads and the installation steps of every platform, the one the browser runs on
/// first, and a live check of whether the device trusts the CA yet.
enum OnboardingPage {
    /// The page for a browser on `order.first` (see `OnboardingPlatform.order`). `throughProxy` says whether the request
    /// came through the proxy: only then can the page check the trust (it fetches `https://mitm.proxy/trusted`).
    /// `advertised` (`--advertise`) is the proxy address a device that came straight here is told to set.
    static func html(
        authority: CertificateAuthority, order: [OnboardingPlatform], detected: Bool, throughProxy: Bool,
        advertised: AdvertisedAddress?
    ) -> String {
        let name = XMLText.escaped(authority.certificate.commonName ?? "mitm-proxy CA")
        let intro =
            detected
            ? "<p class=\"detected\">Steps for <b>\(order[0].title)</b> first; the other platforms follow.</p>" : ""
        let sections = order.map { platform in
            "<section id=\"\(platform.rawValue)\">\n<h2>\(platform.title)</h2>\n<ol>\n"
                + steps(platform, name: name).map { "<li>\($0)</li>" }.joined(separator: "\n") + "\n</ol>\n</section>"
        }.joined(separator: "\n")
        return """
            <!doctype html>
            <html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>mitm-proxy CA</title>
            <style>body{font-family:-apple-system,system-ui,sans-serif;max-width:42em;margin:1.5em auto;padding:0 1em;line-height:1.45}
            code{background:#f2f2f2;padding:0 .2em;word-break:break-all}section{border-top:1px solid #ddd;margin-top:1em}
            .detected{background:#eef6ff;padding:.5em}a.button{display:inline-block;margin:.2em .4em .2em 0;padding:.4em .8em;border:1px solid #06c;border-radius:.4em;text-decoration:none}</style>
            </head>
            <body>
            <h1>mitm-proxy</h1>
            <p>To let this test proxy intercept HTTPS, install its CA certificate <b>\(name)</b>
            (SHA-256 <code>\(authority.certificate.fingerprintSHA256)</code>). Install it on test devices only, and remove it when you are done.</p>
            <p><a class="button" href="/ca.mobileconfig">Profile (iOS, macOS)</a><a class="button" href="/ca.cer">DER .cer (Android, Windows)</a><a class="button" href="/ca.pem">PEM .pem (Linux, Firefox, tools)</a></p>
            \(trustCheck(throughProxy: throughProxy, advertised: advertised))
            \(intro)
            \(sections)
            </body></html>
            """
    }

    private static func trustCheck(throughProxy: Bool, advertised: AdvertisedAddress?) -> String {
        guard throughProxy else {
            let proxy =
                advertised.map { "server <b>\(XMLText.escaped($0.host))</b> port <b>\($0.port)</b>" } ?? "this computer"
            return
                "<p id=\"trust\">Set this device's proxy to \(proxy), then open <b>http://\(LocalPages.host)/</b> to check that it trusts the CA.</p>"
        }
        return """
            <p id="trust">Checking whether this device already trusts the CA&hellip;
            (<a href="https://\(LocalPages.host)/">https://\(LocalPages.host)/</a> loads only when it does)</p>
            <script>
            fetch("https://\(LocalPages.host)/trusted", {mode: "no-cors", cache: "no-store"}).then(function () {
              document.getElementById("trust").innerHTML = "&#10004; This device trusts the CA: the proxy can intercept its HTTPS.";
            }, function () {
              document.getElementById("trust").innerHTML = "&#10008; This device does not trust the CA yet: install it as below, then reload this page.";
            });
            </script>
            """
    }

    /// The steps, as HTML list items (`name` is already escaped).
    private static func steps(_ platform: OnboardingPlatform, name: String) -> [String] {
        switch platform {
        case .iOS:
            return [
                "In <b>Safari</b> (other browsers cannot install profiles) open <a href=\"/ca.mobileconfig\">the configuration profile</a> and tap <b>Allow</b>.",
                "Open <b>Settings</b>, tap <b>Profile Downloaded</b> near the top (or General &rarr; VPN &amp; Device Management), then <b>Install</b>.",
                "Settings &rarr; General &rarr; About &rarr; <b>Certificate Trust Settings</b>: turn on full trust for <b>\(name)</b>. "
                    + "Without this step no app trusts it for HTTPS.",
                "When done testing: Settings &rarr; General &rarr; VPN &amp; Device Management &rarr; the profile &rarr; Remove Profile.",
            ]
        case .android:
            return [
                "Download <a href=\"/ca.cer\">mitm-proxy-ca.cer</a>.",
                "Settings &rarr; Security &amp; privacy &rarr; More security settings &rarr; Encryption &amp; credentials &rarr; Install a certificate "
                    + "&rarr; <b>CA certificate</b> &rarr; Install anyway, and pick the downloaded file (the menus differ between makers: search "
                    + "Settings for &ldquo;CA certificate&rdquo;). Since Android 11 tapping the download does not install it.",
                "Apps trust a CA the user installed only when their <code>network_security_config.xml</code> says "
                    + "<code>&lt;certificates src=\"user\"/&gt;</code> (usually in <code>&lt;debug-overrides&gt;</code>); Chrome does.",
                "When done testing: Encryption &amp; credentials &rarr; Trusted credentials &rarr; User &rarr; remove <b>\(name)</b>.",
            ]
        case .macOS:
            return [
                "Download <a href=\"/ca.pem\">mitm-proxy-ca.pem</a> and open it: Keychain Access adds it to the login keychain.",
                "In Keychain Access double-click <b>\(name)</b> &rarr; Trust &rarr; When using this certificate: <b>Always Trust</b>.",
                "Or in Terminal: <code>sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain mitm-proxy-ca.pem</code>",
                "An iPad that shows this section says it is a Mac: follow the iPhone and iPad steps.",
            ]
        case .windows:
            return [
                "Download <a href=\"/ca.cer\">mitm-proxy-ca.cer</a> and open it &rarr; Install Certificate &rarr; Current User &rarr; "
                    + "Place all certificates in the following store &rarr; <b>Trusted Root Certification Authorities</b> &rarr; Finish &rarr; Yes.",
                "Or in a terminal: <code>certutil -user -addstore Root mitm-proxy-ca.cer</code>",
                "Edge, Chrome and most apps use this store; Firefox has its own (below).",
            ]
        case .linux:
            return [
                "Debian, Ubuntu: <code>sudo cp mitm-proxy-ca.pem /usr/local/share/ca-certificates/mitm-proxy-ca.crt &amp;&amp; sudo update-ca-certificates</code> "
                    + "(from <a href=\"/ca.pem\">mitm-proxy-ca.pem</a>)",
                "Fedora, RHEL: <code>sudo cp mitm-proxy-ca.pem /etc/pki/ca-trust/source/anchors/ &amp;&amp; sudo update-ca-trust</code>",
                "Chrome and Chromium read their own database: <code>certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n mitm-proxy -i mitm-proxy-ca.pem</code> "
                    + "(package libnss3-tools)",
                "Tools take the file too: <code>curl --cacert</code>, <code>SSL_CERT_FILE</code>, <code>REQUESTS_CA_BUNDLE</code>, <code>NODE_EXTRA_CA_CERTS</code>.",
            ]
        case .firefox:
            return [
                "Settings &rarr; Privacy &amp; Security &rarr; Certificates &rarr; <b>View Certificates</b> &rarr; Authorities &rarr; <b>Import</b> "
                    + "<a href=\"/ca.pem\">mitm-proxy-ca.pem</a> and tick &ldquo;Trust this CA to identify websites&rdquo;.",
                "Or, on Windows and macOS, let Firefox use the system's store: <code>about:config</code> &rarr; "
                    + "<code>security.enterprise_roots.enabled</code> = true.",
                "Firefox for Android: Settings &rarr; About Firefox, tap the logo five times, then Settings &rarr; Secret Settings &rarr; "
                    + "<b>Use third party CA certificates</b> (after installing the CA in Android).",
            ]
        }
    }
}
