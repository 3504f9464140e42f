// A Go client for mitm-proxy's live tests: `go run proxy_client.go PROXY_URL CA_FILE URL`.
// Go's net/http with an explicit proxy (CONNECT for https) and a root pool holding only CA_FILE
// ("-" for the system roots). Prints "status proto length body" or "failed: error".
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

func main() {
	proxyURL, err := url.Parse(os.Args[1])
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	config := &tls.Config{}
	if os.Args[2] != "-" {
		pem, err := os.ReadFile(os.Args[2])
		if err != nil {
			fmt.Println("failed:", err)
			return
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		config.RootCAs = pool
	}
	transport := &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: config, ForceAttemptHTTP2: true}
	client := &http.Client{Transport: transport}
	response, err := client.Get(os.Args[3])
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	text := "binary"
	if len(body) <= 64 {
		text = strings.TrimSpace(string(body))
	}
	fmt.Println(response.StatusCode, response.Proto, len(body), text)
}
