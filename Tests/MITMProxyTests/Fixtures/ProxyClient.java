// A Java client for mitm-proxy's live tests, run as a single-file program: `java ProxyClient.java URL`.
// The proxy and the trust store come from system properties (-Dhttps.proxyHost/-Dhttps.proxyPort,
// -Djavax.net.ssl.trustStore): the way an app under test is pointed at the proxy. Prints one line per
// client stack: HttpsURLConnection, then java.net.http.HttpClient with a proxy selector.

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import javax.net.ssl.HttpsURLConnection;

public class ProxyClient {
    public static void main(String[] arguments) throws Exception {
        String url = arguments[0];
        try {
            HttpsURLConnection connection = (HttpsURLConnection) new URL(url).openConnection();
            try (InputStream body = connection.getInputStream()) {
                byte[] bytes = body.readAllBytes();
                System.out.println("HttpsURLConnection " + connection.getResponseCode() + " " + bytes.length + " " + summary(bytes));
            }
        } catch (Exception error) {
            System.out.println("HttpsURLConnection failed " + error.getClass().getSimpleName());
        }
        try {
            int proxyPort = Integer.parseInt(System.getProperty("https.proxyPort"));
            HttpClient client = HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress(System.getProperty("https.proxyHost"), proxyPort)))
                .build();
            HttpResponse<byte[]> response = client.send(HttpRequest.newBuilder(URI.create(url)).build(),
                                                        HttpResponse.BodyHandlers.ofByteArray());
            System.out.println("HttpClient " + response.statusCode() + " " + response.body().length + " " + summary(response.body())
                               + " " + response.version());
        } catch (Exception error) {
            System.out.println("HttpClient failed " + error.getClass().getSimpleName());
        }
    }

    private static String summary(byte[] bytes) {
        return bytes.length <= 64 ? new String(bytes, java.nio.charset.StandardCharsets.UTF_8).replace(' ', '_') : "binary";
    }
}
