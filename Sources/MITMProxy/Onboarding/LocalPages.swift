import MITMCore
import MITMTLS

/// The proxy's own web pages, reached at `http://mitm.proxy/` through the proxy or at the proxy's
/// address directly: how a phone downloads the CA certificate.
enum LocalPages {
    /// The host name that always means the proxy itself.
    static let host = ProxyProbe.trustHost

    static func handles(host: String) -> Bool { host == Self.host }

    /// The response to `request` for `path` (its target's path and query); `advertised` is the proxy address the
    /// onboarding page names.
    static func response(
        for path: String, request: HTTPRequestHead, authority: CertificateAuthority,
        advertised: AdvertisedAddress?
    ) -> LocalResponse {
        let route = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        switch route {
        case "/", "/index.html":
            let userAgent = request.headers.first("user-agent")
            let page = OnboardingPage.html(
                authority: authority, order: OnboardingPlatform.order(forUserAgent: userAgent),
                detected: !OnboardingPlatform.detected(userAgent).isEmpty, throughProxy: cameThroughProxy(request),
                advertised: advertised)
            return LocalResponse(
                status: 200, reasonPhrase: "OK", contentType: "text/html; charset=utf-8", body: Array(page.utf8),
                reasonText: "")
        case "/ca.pem", "/ca.crt":
            return download(
                Array(authority.certificate.pem.utf8), type: "application/x-x509-ca-cert", file: "mitm-proxy-ca.pem")
        case "/ca.cer", "/ca.der":
            return download(authority.certificate.der, type: "application/pkix-cert", file: "mitm-proxy-ca.cer")
        case "/ca.mobileconfig":
            let certificate = authority.certificate
            let profile = RootCertificateProfile(
                certificateDER: certificate.der, certificateSHA256: SHA256Digest.hash(certificate.der),
                displayName: certificate.commonName ?? "mitm-proxy CA")
            return download(
                Array(profile.xml.utf8), type: RootCertificateProfile.contentType, file: "mitm-proxy-ca.mobileconfig")
        case "/trusted":
            // Fetched over https://mitm.proxy/ by the index page: it loads only if the device trusts the CA.
            return LocalResponse(
                status: 200, reasonPhrase: "OK", contentType: "text/plain; charset=utf-8",
                body: Array("this client trusts the mitm-proxy CA\n".utf8), reasonText: "")
        default:
            return .error(
                status: 404,
                reason: "no page \(route) here; the CA certificate is at /ca.pem, /ca.cer and /ca.mobileconfig")
        }
    }

    private static func download(_ body: [UInt8], type: String, file: String) -> LocalResponse {
        var response = LocalResponse(status: 200, reasonPhrase: "OK", contentType: type, body: body, reasonText: "")
        response.extraHeaders.add(name: "Content-Disposition", value: "attachment; filename=\"\(file)\"")
        return response
    }

    /// An absolute-form request came through the proxy, and so did one for `mitm.proxy` inside the trust probe's tunnel;
    /// an origin-form request for the proxy's own address came straight to it.
    private static func cameThroughProxy(_ request: HTTPRequestHead) -> Bool {
        if case .absolute? = try? RequestTarget.parse(request.target, method: request.method) { return true }
        let hostField = request.headers.first("host")?.lowercased() ?? ""
        return hostField == host || hostField.hasPrefix(host + ":")
    }
}
