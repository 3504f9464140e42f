// Java's own HttpClient (java.net.http) through mitm-proxy, asking for HTTP/2.
// Usage: java H2JavaClient.java PROXY_PORT URL CA_PEM [SPKI_SHA256_BASE64]
// Trusts only CA_PEM; with a pin, also requires the leaf's SubjectPublicKeyInfo to hash to it, as an
// app that pins its server would. Prints "<version> <status> <body>", or "FAILED <exception>" and exits 1.
import java.io.FileInputStream;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

public class H2JavaClient {
    public static void main(String[] arguments) throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (FileInputStream pem = new FileInputStream(arguments[2])) {
            store.setCertificateEntry("proxy", CertificateFactory.getInstance("X.509").generateCertificate(pem));
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        X509TrustManager trust = (X509TrustManager) factory.getTrustManagers()[0];
        String pin = arguments.length > 3 ? arguments[3] : null;
        X509TrustManager pinning = new X509TrustManager() {
            public void checkClientTrusted(X509Certificate[] chain, String type) throws CertificateException {
                trust.checkClientTrusted(chain, type);
            }
            public void checkServerTrusted(X509Certificate[] chain, String type) throws CertificateException {
                trust.checkServerTrusted(chain, type);
                if (pin == null) return;
                try {
                    byte[] digest = MessageDigest.getInstance("SHA-256").digest(chain[0].getPublicKey().getEncoded());
                    if (!Base64.getEncoder().encodeToString(digest).equals(pin)) {
                        throw new CertificateException("certificate pin mismatch");
                    }
                } catch (java.security.NoSuchAlgorithmException error) {
                    throw new CertificateException(error);
                }
            }
            public X509Certificate[] getAcceptedIssuers() { return trust.getAcceptedIssuers(); }
        };
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] { pinning }, null);
        HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_2)
            .sslContext(context)
            .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", Integer.parseInt(arguments[0]))))
            .build();
        try {
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create(arguments[1])).build(),
                                                         HttpResponse.BodyHandlers.ofString());
            System.out.println(response.version() + " " + response.statusCode() + " " + response.body());
        } catch (Exception error) {
            System.out.println("FAILED " + error);
            System.exit(1);
        }
        // The client's connection threads would keep the JVM up until the proxy's idle timeout.
        System.exit(0);
    }
}
