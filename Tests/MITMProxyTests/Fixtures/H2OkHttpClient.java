// OkHttp (as Android apps use it) through mitm-proxy; OkHttp negotiates HTTP/2 when the server offers it.
// Usage: java -cp okhttp.jar:okio.jar H2OkHttpClient.java PROXY_PORT URL CA_PEM [SPKI_SHA256_BASE64]
// Trusts only CA_PEM; with a pin, adds a CertificatePinner for the URL's host ("sha256/<pin>"), the way
// apps pin. Prints "<protocol> <status> <body>", or "FAILED <exception>" and exits 1.
import java.io.FileInputStream;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import okhttp3.CertificatePinner;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

public class H2OkHttpClient {
    public static void main(String[] arguments) throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (FileInputStream pem = new FileInputStream(arguments[2])) {
            store.setCertificateEntry("proxy", CertificateFactory.getInstance("X.509").generateCertificate(pem));
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        X509TrustManager trust = (X509TrustManager) factory.getTrustManagers()[0];
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new javax.net.ssl.TrustManager[] { trust }, null);
        OkHttpClient.Builder builder = new OkHttpClient.Builder()
            .proxy(new Proxy(Proxy.Type.HTTP, new InetSocketAddress("127.0.0.1", Integer.parseInt(arguments[0]))))
            .sslSocketFactory(context.getSocketFactory(), trust);
        if (arguments.length > 3) {
            String host = HttpUrl.get(arguments[1]).host();
            builder.certificatePinner(new CertificatePinner.Builder().add(host, "sha256/" + arguments[3]).build());
        }
        try (Response response = builder.build().newCall(new Request.Builder().url(arguments[1]).build()).execute()) {
            System.out.println(response.protocol() + " " + response.code() + " " + response.body().string());
        } catch (Exception error) {
            System.out.println("FAILED " + error);
            System.exit(1);
        }
        // The client's connection threads would keep the JVM up until the proxy's idle timeout.
        System.exit(0);
    }
}
