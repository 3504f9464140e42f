// Go's net/http client through mitm-proxy, with HTTP/2 as Go negotiates it by default.
// Usage: go run h2_go_client.go PROXY_URL CA_PEM URL [SPKI_SHA256_BASE64]
// Trusts only CA_PEM; with a pin, also requires the leaf's SubjectPublicKeyInfo to hash to it, as an
// app that pins its server would. Prints "<proto> <status> <body>", or "FAILED <error>" and exits 1.
package main

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
)

func main() {
	pem, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Println("FAILED", err)
		os.Exit(1)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	proxy, _ := url.Parse(os.Args[1])
	config := &tls.Config{RootCAs: roots}
	if len(os.Args) > 4 {
		pin := os.Args[4]
		config.VerifyPeerCertificate = func(_ [][]byte, chains [][]*x509.Certificate) error {
			digest := sha256.Sum256(chains[0][0].RawSubjectPublicKeyInfo)
			if base64.StdEncoding.EncodeToString(digest[:]) != pin {
				return errors.New("certificate pin mismatch")
			}
			return nil
		}
	}
	transport := &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: config, ForceAttemptHTTP2: true}
	response, err := (&http.Client{Transport: transport}).Get(os.Args[3])
	if err != nil {
		fmt.Println("FAILED", err)
		os.Exit(1)
	}
	defer response.Body.Close()
	body, _ := io.ReadAll(response.Body)
	fmt.Println(response.Proto, response.StatusCode, string(body))
}
