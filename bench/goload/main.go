// goload: the benchmark's independent client. Go's net/http as an application uses it (its own request headers,
// Accept-Encoding: gzip, its connection pool and its HTTP/2), speaking the same line protocol as bench/loadgen.c
// so that bench/bench.py measures the proxies over the same START..END window:
//
//	START            the warm-up is over; the measured window begins
//	END              the window is over
//	RESULT {json}    the figures of the window; always the last line
//
// Modes: keepalive (one pooled connection per worker), close (DisableKeepAlives: a new TLS connection and
// "Connection: close" on every request, no TLS session cache, as Go does by default), h2 (HTTP/2, every worker's
// requests as streams on one connection).
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type window struct {
	open      atomic.Bool
	mu        sync.Mutex
	latencies []time.Duration
	requests  int64
	errors    int64
	bytes     int64
}

func (w *window) record(latency time.Duration, bytes int64, err error) {
	if !w.open.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.errors++
		return
	}
	w.requests++
	w.bytes += bytes
	w.latencies = append(w.latencies, latency)
}

func cpuMicroseconds() float64 {
	var usage syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	return float64(usage.Utime.Nano()+usage.Stime.Nano()) / 1e3
}

func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	index := int(p * float64(len(sorted)-1))
	return float64(sorted[index].Microseconds()) / 1e3
}

func main() {
	mode := flag.String("mode", "keepalive", "keepalive, close or h2")
	connect := flag.String("connect", "", "IP:PORT every connection goes to (the proxy, or the server itself)")
	proxy := flag.String("proxy", "", "HOST:PORT of the origin behind an explicit proxy at --connect (CONNECT)")
	host := flag.String("host", "", "the origin's name (SNI and Host)")
	path := flag.String("path", "/200b", "the path requested")
	concurrency := flag.Int("concurrency", 32, "workers, each with one request in flight")
	warmup := flag.Float64("warmup", 1, "seconds before the window")
	duration := flag.Float64("duration", 4, "seconds in the window")
	flag.Parse()
	if *connect == "" || *host == "" || (*mode != "keepalive" && *mode != "close" && *mode != "h2") {
		fmt.Fprintln(os.Stderr, "usage: goload --mode keepalive|close|h2 --connect IP:PORT --host NAME [--proxy HOST:PORT]")
		os.Exit(2)
	}

	dialer := &net.Dialer{Timeout: 10 * time.Second}
	transport := &http.Transport{
		// Every connection goes to --connect: the proxy (which is then sent CONNECT), or the server named --host.
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, *connect)
		},
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		DisableKeepAlives:   *mode == "close",
		MaxIdleConnsPerHost: *concurrency,
		ForceAttemptHTTP2:   *mode == "h2",
	}
	if *mode != "h2" {
		transport.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	target := "https://" + *host + *path
	if *proxy != "" {
		proxyURL := &url.URL{Scheme: "http", Host: *connect}
		transport.Proxy = http.ProxyURL(proxyURL)
		target = "https://" + *proxy + *path
	}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}

	var measured window
	stop := make(chan struct{})
	var workers sync.WaitGroup
	for i := 0; i < *concurrency; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				started := time.Now()
				response, err := client.Get(target)
				var bytes int64
				if err == nil {
					bytes, err = io.Copy(io.Discard, response.Body)
					response.Body.Close()
					if err == nil && response.StatusCode != 200 {
						err = fmt.Errorf("status %d", response.StatusCode)
					}
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
				}
				measured.record(time.Since(started), bytes, err)
			}
		}()
	}
	time.Sleep(time.Duration(*warmup * float64(time.Second)))
	cpuAtStart := cpuMicroseconds()
	openedAt := time.Now()
	measured.open.Store(true)
	fmt.Println("START")
	time.Sleep(time.Duration(*duration * float64(time.Second)))
	measured.open.Store(false)
	seconds := time.Since(openedAt).Seconds()
	cpu := cpuMicroseconds() - cpuAtStart
	fmt.Println("END")
	close(stop)
	workers.Wait()

	measured.mu.Lock()
	defer measured.mu.Unlock()
	sort.Slice(measured.latencies, func(i, j int) bool { return measured.latencies[i] < measured.latencies[j] })
	var maximum float64
	if n := len(measured.latencies); n > 0 {
		maximum = float64(measured.latencies[n-1].Microseconds()) / 1e3
	}
	result, _ := json.Marshal(map[string]any{
		"mode": *mode, "requests": measured.requests, "errors": measured.errors, "seconds": seconds,
		"bytes": measured.bytes, "rps": float64(measured.requests) / seconds,
		"p50_ms": percentile(measured.latencies, 0.5), "p99_ms": percentile(measured.latencies, 0.99), "max_ms": maximum,
		"loadgen_cpu_us": cpu, "handshakes": 0, "resumed": 0,
	})
	fmt.Printf("RESULT %s\n", result)
}
