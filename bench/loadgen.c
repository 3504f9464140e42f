/*
 * bench-loadgen: the load generator of mitm-proxy's benchmark (bench/README.md).
 *
 * One thread, epoll, nonblocking sockets, OpenSSL. It speaks HTTPS/1.1 either straight to a TLS
 * server or through an explicit proxy (CONNECT host:port, then TLS inside the tunnel), which is what
 * wrk and h2load cannot do. It never verifies certificates (that is the proxy's and the origin's
 * business, and it would only add client CPU).
 *
 * Modes:
 *   keepalive  N connections, each sends requests back to back over one TLS connection
 *   newconn    N workers, each opens a new TCP+TLS connection per request (resuming its last
 *              TLS session unless --no-resume), closes it after the response
 *   download   one connection at a time, --count downloads of --path; reports MiB/s per download
 *   hold       opens --count connections (--concurrency at a time), one request each, then keeps
 *              them open until stdin reaches EOF or --duration seconds pass
 *   first      for each of --count never-seen names PREFIX<i>SUFFIX: one connection (first contact)
 *              then a second one (repeat), one at a time, --gap-ms apart, no session resumption
 *
 * --h2 STREAMS (keepalive and download): ALPN h2 only, and each connection keeps STREAMS requests in flight as
 * HTTP/2 streams (nghttp2), a new one submitted as each ends; download uses one stream per connection. The
 * client's receive windows are 16 MiB, so that they never limit the peer.
 *
 * Protocol with the driver (bench/bench.py), on stdout, one line each, flushed:
 *   START           the measured window begins (after --warmup seconds)
 *   END             the measured window ends (no request is counted after it)
 *   HELD n          (hold) n connections are established and idle
 *   RESULT {json}   the figures; always the last line
 * Errors go to stderr; the exit status is non-zero when the run could not be measured.
 *
 * Build: gcc -O2 -o bench-loadgen loadgen.c -lssl -lcrypto -lnghttp2
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum mode { MODE_KEEPALIVE, MODE_NEWCONN, MODE_DOWNLOAD, MODE_HOLD, MODE_FIRST };

enum state {
    ST_IDLE,        /* slot without a connection */
    ST_CONNECTING,  /* TCP connect in progress */
    ST_PROXY_WRITE, /* sending CONNECT */
    ST_PROXY_READ,  /* reading the proxy's answer */
    ST_HANDSHAKE,   /* TLS handshake */
    ST_WRITE,       /* sending the request */
    ST_READ,        /* reading the response */
    ST_H2,          /* HTTP/2: streams in flight on the connection */
    ST_HELD,        /* hold mode: done, kept open */
    ST_SHUTDOWN     /* close_notify being sent */
};

struct options {
    enum mode mode;
    struct sockaddr_in target;
    const char *proxy_authority; /* host:port for CONNECT, NULL = direct TLS */
    const char *host;            /* SNI and Host header */
    const char *path;
    int concurrency;
    double warmup;
    double duration;
    int count;
    int resume;
    const char *name_prefix;
    const char *name_suffix;
    int connect_port; /* port in CONNECT for first mode */
    double timeout;   /* seconds a single exchange may take */
    double gap_ms;    /* first mode: pause between connections, so each starts on an idle proxy */
    double stall;     /* seconds without any event before a connection counts as failed */
    int h2_streams;   /* HTTP/2 streams in flight per connection; 0 = HTTP/1.1 */
};

/* One HTTP/2 request in flight. */
struct h2_stream {
    int in_use;
    uint64_t started_ns;
    int status;
    long long body;
};

struct conn {
    int index;
    int fd;
    SSL *ssl;
    enum state state;
    SSL_SESSION *session; /* last session of this slot (newconn resumption) */
    char request[1024];
    int request_len;
    int request_off;
    char connect_req[600];
    int connect_len;
    int connect_off;
    char head[8192]; /* response head (or proxy answer) being collected */
    int head_len;
    int in_body;
    int chunked;
    long long body_left;   /* content-length bytes still expected */
    int chunk_state;       /* 0 size line, 1 data, 2 CRLF after data, 3 trailers */
    long long chunk_left;
    char chunk_line[64];
    int chunk_line_len;
    int trailer_empty;     /* trailers: current line is empty so far */
    int status;
    int want_write;        /* epoll interest */
    int registered;
    uint64_t started_ns;   /* request (or connection, newconn/first) start */
    uint64_t conn_started_ns;
    uint64_t progress_ns;  /* last event on this connection (stall detection) */
    long long body_bytes;
    int requests_on_conn;
    const char *name;      /* host name of this connection */
    char name_buf[256];
    nghttp2_session *h2;   /* HTTP/2 session (--h2) */
    int h2_inflight;       /* streams submitted and not closed */
    int h2_done;           /* no more streams: shut down once the in-flight ones ended */
    uint8_t *h2_out;       /* frames produced by nghttp2 and not yet written */
    size_t h2_out_len, h2_out_off, h2_out_cap;
    struct h2_stream *h2_slots; /* --h2 slots for the requests in flight */
};

static struct options opt;
static int epfd;
static SSL_CTX *ctx;
static struct conn *conns;
static uint32_t *latencies;
static size_t latencies_len, latencies_cap;
static uint32_t *first_lat, *repeat_lat;
static int first_len, repeat_len;
static int measuring, stopping;
static long long completed, errors, bytes_total, resumed, handshakes;
static long long measured_bytes;
static uint64_t window_start_ns, window_end_ns;
static struct rusage ru_start, ru_end;
static double *download_rates;
static int downloads_done;
static int connections_open;
static int hold_established, hold_started;
static int first_index; /* next connection number in first mode */
static struct conn *pending_conn; /* first mode: slot to start at pending_at */
static uint64_t pending_at;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench-loadgen: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static void say(const char *line) {
    fputs(line, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

static void record_latency(uint64_t ns) {
    if (latencies_len == latencies_cap) {
        latencies_cap = latencies_cap ? latencies_cap * 2 : 65536;
        latencies = realloc(latencies, latencies_cap * sizeof(uint32_t));
        if (!latencies) die("out of memory");
    }
    uint64_t us = ns / 1000;
    latencies[latencies_len++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

static long long error_limit(void) { return 1000; }

static void note_error(struct conn *c, const char *what) {
    errors++;
    if (errors <= 5) {
        unsigned long e = ERR_peek_last_error();
        char buf[256] = "";
        if (e) ERR_error_string_n(e, buf, sizeof buf);
        fprintf(stderr, "bench-loadgen: connection %d (%s): %s%s%s%s\n", c->index, c->name, what,
                errno ? " / " : "", errno ? strerror(errno) : "", buf[0] ? buf : "");
    }
    ERR_clear_error();
    if (errors > error_limit()) die("too many errors (%lld); stopping", errors);
}

static void set_interest(struct conn *c, int want_write) {
    struct epoll_event ev = {.events = want_write ? EPOLLOUT : EPOLLIN, .data.ptr = c};
    if (!c->registered) {
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl add: %s", strerror(errno));
        c->registered = 1;
    } else if (c->want_write != want_write) {
        if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) die("epoll_ctl mod: %s", strerror(errno));
    }
    c->want_write = want_write;
}

static void close_conn(struct conn *c) {
    if (c->h2) {
        nghttp2_session_del(c->h2); /* the streams' slots are the connection's own: nothing else to free */
        c->h2 = NULL;
    }
    c->h2_out_len = c->h2_out_off = 0;
    c->h2_inflight = 0;
    c->h2_done = 0;
    if (c->ssl) {
        SSL_free(c->ssl);
        c->ssl = NULL;
    }
    if (c->fd >= 0) {
        close(c->fd); /* also removes it from epoll */
        c->fd = -1;
        connections_open--;
    }
    c->registered = 0;
    c->state = ST_IDLE;
}

static void build_request(struct conn *c) {
    /* no "Connection: close" even when the client hangs up after one response: a client that closes
       first is what a returning app does, and it lets a proxy keep its upstream connection */
    c->request_len = snprintf(c->request, sizeof c->request,
                              "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: mitm-proxy-bench\r\nAccept: */*\r\n\r\n",
                              opt.path, c->name);
    c->request_off = 0;
}

static void reset_response(struct conn *c) {
    c->head_len = 0;
    c->in_body = 0;
    c->chunked = 0;
    c->body_left = 0;
    c->chunk_state = 0;
    c->chunk_left = 0;
    c->chunk_line_len = 0;
    c->trailer_empty = 1;
    c->status = 0;
    c->body_bytes = 0;
}

/* Picks the host name of the next connection of slot c. Returns 0 when first mode has no more. */
static int choose_name(struct conn *c) {
    if (opt.mode != MODE_FIRST) {
        c->name = opt.host;
        return 1;
    }
    if (first_index >= 2 * opt.count) return 0;
    snprintf(c->name_buf, sizeof c->name_buf, "%s%d%s", opt.name_prefix, first_index / 2, opt.name_suffix);
    c->name = c->name_buf;
    return 1;
}

static void start_conn(struct conn *c) {
    if (!choose_name(c)) return;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket: %s (raise the open-files limit)", strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    connections_open++;
    c->registered = 0;
    c->want_write = -1;
    c->conn_started_ns = now_ns();
    c->started_ns = c->conn_started_ns;
    c->progress_ns = c->conn_started_ns;
    c->requests_on_conn = 0;
    reset_response(c);
    int r = connect(fd, (struct sockaddr *)&opt.target, sizeof opt.target);
    if (r < 0 && errno != EINPROGRESS) {
        note_error(c, "connect failed");
        close_conn(c);
        return;
    }
    c->state = ST_CONNECTING;
    set_interest(c, 1);
}

static int begin_tls(struct conn *c) {
    c->ssl = SSL_new(ctx);
    if (!c->ssl) die("SSL_new failed");
    SSL_set_fd(c->ssl, c->fd);
    SSL_set_tlsext_host_name(c->ssl, c->name);
    if (opt.resume && c->session && opt.mode == MODE_NEWCONN) SSL_set_session(c->ssl, c->session);
    SSL_set_connect_state(c->ssl);
    c->state = ST_HANDSHAKE;
    return 1;
}

static void finish_exchange(struct conn *c);

/* Feeds decrypted response bytes to the parser. Returns 1 when the response is complete. */
static int parse_response(struct conn *c, const char *data, int len) {
    int i = 0;
    while (i < len) {
        if (!c->in_body) {
            if (c->head_len >= (int)sizeof c->head - 1) return -1;
            c->head[c->head_len++] = data[i++];
            if (c->head_len >= 4 && memcmp(c->head + c->head_len - 4, "\r\n\r\n", 4) == 0) {
                c->head[c->head_len] = 0;
                if (strncmp(c->head, "HTTP/1.", 7) != 0) return -1;
                c->status = atoi(c->head + 9);
                if (c->status == 100) { /* interim: start over */
                    c->head_len = 0;
                    continue;
                }
                c->in_body = 1;
                /* lower-case search for the framing headers */
                for (char *p = c->head; *p; p++)
                    if (*p >= 'A' && *p <= 'Z') *p += 32;
                char *cl = strstr(c->head, "\r\ncontent-length:");
                char *te = strstr(c->head, "\r\ntransfer-encoding:");
                if (te && strstr(te, "chunked") && strstr(te, "chunked") < strstr(te + 2, "\r\n")) {
                    c->chunked = 1;
                    c->chunk_state = 0;
                } else if (cl) {
                    c->body_left = atoll(cl + 17);
                    if (c->body_left == 0) return 1;
                } else {
                    return -1; /* close-delimited bodies are not expected here */
                }
            }
            continue;
        }
        if (!c->chunked) {
            int take = len - i;
            if (take > c->body_left) take = (int)c->body_left;
            c->body_left -= take;
            c->body_bytes += take;
            i += take;
            if (c->body_left == 0) return 1;
            continue;
        }
        /* chunked */
        switch (c->chunk_state) {
        case 0: {
            char ch = data[i++];
            if (ch == '\n') {
                c->chunk_line[c->chunk_line_len] = 0;
                c->chunk_left = strtoll(c->chunk_line, NULL, 16);
                c->chunk_line_len = 0;
                if (c->chunk_left == 0) {
                    c->chunk_state = 3;
                    c->trailer_empty = 1;
                } else {
                    c->chunk_state = 1;
                }
            } else if (ch != '\r' && c->chunk_line_len < (int)sizeof c->chunk_line - 1) {
                c->chunk_line[c->chunk_line_len++] = ch;
            }
            break;
        }
        case 1: {
            int take = len - i;
            if (take > c->chunk_left) take = (int)c->chunk_left;
            c->chunk_left -= take;
            c->body_bytes += take;
            i += take;
            if (c->chunk_left == 0) c->chunk_state = 2;
            break;
        }
        case 2:
            if (data[i++] == '\n') c->chunk_state = 0;
            break;
        case 3: {
            char ch = data[i++];
            if (ch == '\n') {
                if (c->trailer_empty) return 1;
                c->trailer_empty = 1;
            } else if (ch != '\r') {
                c->trailer_empty = 0;
            }
            break;
        }
        }
    }
    return 0;
}

static void schedule_next(struct conn *c);

/* ---- HTTP/2 (--h2) */

static int h2_submit(struct conn *c) {
    struct h2_stream *slot = NULL;
    for (int i = 0; i < opt.h2_streams; i++)
        if (!c->h2_slots[i].in_use) { slot = &c->h2_slots[i]; break; }
    if (!slot) return 0;
    const char *method = "GET", *scheme = "https";
    char *path = (char *)opt.path, *authority = (char *)c->name;
#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE}
    nghttp2_nv headers[] = {NV(":method", method), NV(":scheme", scheme), NV(":authority", authority),
                            NV(":path", path), NV("user-agent", "mitm-proxy-bench"), NV("accept", "*/*")};
#undef NV
    memset(slot, 0, sizeof *slot);
    slot->in_use = 1;
    slot->started_ns = now_ns();
    if (nghttp2_submit_request(c->h2, NULL, headers, sizeof headers / sizeof headers[0], NULL, slot) < 0) {
        slot->in_use = 0;
        return -1;
    }
    c->h2_inflight++;
    return 1;
}

static int h2_on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
                        const uint8_t *value, size_t valuelen, uint8_t flags, void *user_data) {
    (void)flags; (void)user_data;
    struct h2_stream *slot = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (slot && namelen == 7 && memcmp(name, ":status", 7) == 0) {
        char text[8] = {0};
        memcpy(text, value, valuelen < 7 ? valuelen : 7);
        int status = atoi(text);
        if (status >= 200) slot->status = status;
    }
    return 0;
}

static int h2_on_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len,
                      void *user_data) {
    (void)flags; (void)data; (void)user_data;
    struct h2_stream *slot = nghttp2_session_get_stream_user_data(session, stream_id);
    if (slot) slot->body += (long long)len;
    return 0;
}

static int h2_on_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code, void *user_data) {
    struct conn *c = user_data;
    struct h2_stream *slot = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!slot) return 0;
    uint64_t t = now_ns();
    c->h2_inflight--;
    c->requests_on_conn++;
    slot->in_use = 0;
    if (error_code != NGHTTP2_NO_ERROR || slot->status != 200) {
        errno = 0;
        char what[80];
        snprintf(what, sizeof what, "HTTP/2 stream ended with status %d, error code %u", slot->status, error_code);
        note_error(c, what);
    } else if (opt.mode == MODE_DOWNLOAD) {
        double seconds = (double)(t - slot->started_ns) / 1e9;
        download_rates[downloads_done++] = (double)slot->body / 1048576.0 / seconds;
        completed++;
        record_latency(t - slot->started_ns);
    } else if (measuring) {
        completed++;
        record_latency(t - slot->started_ns);
    }
    if (opt.mode == MODE_DOWNLOAD || stopping) c->h2_done = 1;
    else if (h2_submit(c) < 0) c->h2_done = 1;
    return 0;
}

/* Starts the session once TLS negotiated h2: SETTINGS with 16 MiB windows, then the first requests. */
static int h2_start(struct conn *c) {
    const unsigned char *alpn = NULL;
    unsigned int alpn_len = 0;
    SSL_get0_alpn_selected(c->ssl, &alpn, &alpn_len);
    if (alpn_len != 2 || memcmp(alpn, "h2", 2) != 0) return -1;
    nghttp2_session_callbacks *callbacks;
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, h2_on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, h2_on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, h2_on_close);
    int r = nghttp2_session_client_new(&c->h2, callbacks, c);
    nghttp2_session_callbacks_del(callbacks);
    if (r != 0) return -1;
    if (!c->h2_slots) c->h2_slots = calloc((size_t)opt.h2_streams, sizeof *c->h2_slots);
    if (!c->h2_out) {
        c->h2_out_cap = 1 << 16;
        c->h2_out = malloc(c->h2_out_cap);
    }
    if (!c->h2_slots || !c->h2_out) die("out of memory");
    nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                         {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
                                         {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 16 << 20}};
    nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, settings, 3);
    nghttp2_session_set_local_window_size(c->h2, NGHTTP2_FLAG_NONE, 0, 16 << 20);
    int streams = opt.mode == MODE_DOWNLOAD ? 1 : opt.h2_streams;
    for (int i = 0; i < streams; i++)
        if (h2_submit(c) < 0) return -1;
    c->h2_done = 0;
    c->state = ST_H2;
    return 0;
}

/* Moves frames both ways until the socket would block. Returns 0 to wait, 1 when the connection is done,
   -1 on an error (noted). */
static int h2_drive(struct conn *c, char *buf, size_t size) {
    for (;;) {
        if (c->h2_out_off < c->h2_out_len) {
            ERR_clear_error();
            size_t written = 0;
            int r = SSL_write_ex(c->ssl, c->h2_out + c->h2_out_off, c->h2_out_len - c->h2_out_off, &written);
            if (r == 1) {
                c->h2_out_off += written;
                continue;
            }
            int e = SSL_get_error(c->ssl, r);
            if (e == SSL_ERROR_WANT_WRITE) { set_interest(c, 1); return 0; }
            if (e != SSL_ERROR_WANT_READ) { note_error(c, "HTTP/2: writing failed"); return -1; }
        } else {
            c->h2_out_len = c->h2_out_off = 0;
            const uint8_t *data;
            ssize_t n;
            while (c->h2_out_len < c->h2_out_cap && (n = nghttp2_session_mem_send(c->h2, &data)) != 0) {
                if (n < 0) { errno = 0; note_error(c, "HTTP/2: nghttp2 could not send"); return -1; }
                if (c->h2_out_len + (size_t)n > c->h2_out_cap) {
                    while (c->h2_out_len + (size_t)n > c->h2_out_cap) c->h2_out_cap *= 2;
                    c->h2_out = realloc(c->h2_out, c->h2_out_cap);
                    if (!c->h2_out) die("out of memory");
                }
                memcpy(c->h2_out + c->h2_out_len, data, (size_t)n);
                c->h2_out_len += (size_t)n;
            }
            if (c->h2_out_len > 0) continue;
        }
        if (c->h2_done && c->h2_inflight == 0) return 1;
        ERR_clear_error();
        size_t got = 0;
        int r = SSL_read_ex(c->ssl, buf, size, &got);
        if (r == 1) {
            bytes_total += (long long)got;
            if (measuring) measured_bytes += (long long)got;
            if (nghttp2_session_mem_recv(c->h2, (const uint8_t *)buf, got) < 0) {
                errno = 0;
                note_error(c, "HTTP/2: the peer broke the protocol");
                return -1;
            }
            continue;
        }
        int e = SSL_get_error(c->ssl, r);
        if (e == SSL_ERROR_WANT_READ) { set_interest(c, c->h2_out_off < c->h2_out_len); return 0; }
        if (e == SSL_ERROR_WANT_WRITE) { set_interest(c, 1); return 0; }
        errno = 0;
        note_error(c, "HTTP/2: the connection ended with streams in flight");
        return -1;
    }
}

/* Runs the connection's state machine until it would block. */
static void drive(struct conn *c) {
    static char buf[65536];
    c->progress_ns = now_ns();
    for (;;) {
        switch (c->state) {
        case ST_IDLE:
            return;
        case ST_CONNECTING: {
            int err = 0;
            socklen_t len = sizeof err;
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err == EINPROGRESS || err == EALREADY) return;
            if (err) {
                errno = err;
                note_error(c, "connect failed");
                close_conn(c);
                schedule_next(c);
                return;
            }
            /* a nonblocking connect is done when the socket is writable; check it really is */
            struct pollfd p = {.fd = c->fd, .events = POLLOUT};
            if (poll(&p, 1, 0) == 0) return;
            if (opt.proxy_authority) {
                const char *authority = opt.proxy_authority;
                char authority_buf[300];
                if (opt.mode == MODE_FIRST) {
                    snprintf(authority_buf, sizeof authority_buf, "%s:%d", c->name, opt.connect_port);
                    authority = authority_buf;
                }
                c->connect_len = snprintf(c->connect_req, sizeof c->connect_req,
                                          "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", authority, authority);
                c->connect_off = 0;
                c->state = ST_PROXY_WRITE;
            } else {
                begin_tls(c);
            }
            break;
        }
        case ST_PROXY_WRITE: {
            ssize_t n = send(c->fd, c->connect_req + c->connect_off, c->connect_len - c->connect_off, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EAGAIN) { set_interest(c, 1); return; }
                note_error(c, "sending CONNECT");
                close_conn(c);
                schedule_next(c);
                return;
            }
            c->connect_off += (int)n;
            if (c->connect_off == c->connect_len) {
                c->state = ST_PROXY_READ;
                c->head_len = 0;
            }
            break;
        }
        case ST_PROXY_READ: {
            /* peek, then consume exactly the answer: the TLS bytes that follow must stay in the socket */
            ssize_t n = recv(c->fd, c->head, sizeof c->head - 1, MSG_PEEK);
            if (n <= 0) {
                if (n < 0 && errno == EAGAIN) { set_interest(c, 0); return; }
                errno = n == 0 ? 0 : errno;
                note_error(c, "the proxy closed before answering CONNECT");
                close_conn(c);
                schedule_next(c);
                return;
            }
            c->head[n] = 0;
            char *end = memmem(c->head, (size_t)n, "\r\n\r\n", 4);
            if (!end) {
                if (n >= (ssize_t)sizeof c->head - 1) {
                    errno = 0;
                    note_error(c, "CONNECT answer too long");
                    close_conn(c);
                    schedule_next(c);
                    return;
                }
                set_interest(c, 0);
                return; /* level-triggered: wakes again when more arrives */
            }
            int answer = (int)(end - c->head) + 4;
            if (recv(c->fd, c->head, (size_t)answer, 0) != answer) die("recv after MSG_PEEK returned less");
            if (strncmp(c->head + 9, "200", 3) != 0) {
                errno = 0;
                note_error(c, "the proxy refused CONNECT");
                close_conn(c);
                schedule_next(c);
                return;
            }
            c->head_len = 0;
            begin_tls(c);
            break;
        }
        case ST_HANDSHAKE: {
            ERR_clear_error();
            int r = SSL_do_handshake(c->ssl);
            if (r == 1) {
                handshakes++;
                if (SSL_session_reused(c->ssl)) resumed++;
                if (opt.h2_streams > 0) {
                    if (h2_start(c) < 0) {
                        errno = 0;
                        note_error(c, "HTTP/2 could not start (the peer did not choose h2?)");
                        close_conn(c);
                        schedule_next(c);
                        return;
                    }
                    break;
                }
                build_request(c);
                c->state = ST_WRITE;
                break;
            }
            int e = SSL_get_error(c->ssl, r);
            if (e == SSL_ERROR_WANT_READ) { set_interest(c, 0); return; }
            if (e == SSL_ERROR_WANT_WRITE) { set_interest(c, 1); return; }
            note_error(c, "TLS handshake failed");
            close_conn(c);
            schedule_next(c);
            return;
        }
        case ST_WRITE: {
            if (c->request_off == 0 && c->requests_on_conn > 0) c->started_ns = now_ns();
            ERR_clear_error();
            size_t written = 0;
            int r = SSL_write_ex(c->ssl, c->request + c->request_off, c->request_len - c->request_off, &written);
            if (r == 1) {
                c->request_off += (int)written;
                if (c->request_off == c->request_len) {
                    reset_response(c);
                    c->state = ST_READ;
                }
                break;
            }
            int e = SSL_get_error(c->ssl, r);
            if (e == SSL_ERROR_WANT_READ) { set_interest(c, 0); return; }
            if (e == SSL_ERROR_WANT_WRITE) { set_interest(c, 1); return; }
            note_error(c, "sending the request failed");
            close_conn(c);
            schedule_next(c);
            return;
        }
        case ST_READ: {
            ERR_clear_error();
            size_t got = 0;
            int r = SSL_read_ex(c->ssl, buf, sizeof buf, &got);
            if (r == 1) {
                bytes_total += (long long)got;
                if (measuring) measured_bytes += (long long)got;
                int done = parse_response(c, buf, (int)got);
                if (done < 0) {
                    errno = 0;
                    note_error(c, "malformed response");
                    close_conn(c);
                    schedule_next(c);
                    return;
                }
                if (done) {
                    finish_exchange(c);
                    if (c->state == ST_READ) continue;
                }
                break;
            }
            int e = SSL_get_error(c->ssl, r);
            if (e == SSL_ERROR_WANT_READ) { set_interest(c, 0); return; }
            if (e == SSL_ERROR_WANT_WRITE) { set_interest(c, 1); return; }
            errno = 0;
            note_error(c, e == SSL_ERROR_ZERO_RETURN ? "closed before the response ended" : "reading the response failed");
            close_conn(c);
            schedule_next(c);
            return;
        }
        case ST_H2: {
            int r = h2_drive(c, buf, sizeof buf);
            if (r == 0) return;
            if (r < 0) {
                close_conn(c);
                schedule_next(c);
                return;
            }
            c->state = ST_SHUTDOWN;
            break;
        }
        case ST_HELD: {
            /* anything from the peer now is a close (or junk): count it and reconnect nothing */
            ssize_t n = recv(c->fd, buf, sizeof buf, 0);
            if (n < 0 && errno == EAGAIN) return;
            errno = 0;
            note_error(c, "held connection closed by the proxy");
            close_conn(c);
            hold_established--;
            return;
        }
        case ST_SHUTDOWN: {
            ERR_clear_error();
            SSL_shutdown(c->ssl); /* queues close_notify; a nonblocking socket takes it at once */
            close_conn(c);
            schedule_next(c);
            return;
        }
        }
    }
}

static void finish_exchange(struct conn *c) {
    uint64_t t = now_ns();
    c->requests_on_conn++;
    if (c->status != 200) {
        errno = 0;
        char what[64];
        snprintf(what, sizeof what, "HTTP status %d", c->status);
        note_error(c, what);
    } else {
        switch (opt.mode) {
        case MODE_KEEPALIVE:
            if (measuring) {
                completed++;
                record_latency(t - c->started_ns);
            }
            break;
        case MODE_NEWCONN:
            if (measuring) {
                completed++;
                record_latency(t - c->conn_started_ns);
            }
            break;
        case MODE_DOWNLOAD: {
            double seconds = (double)(t - c->started_ns) / 1e9;
            download_rates[downloads_done++] = (double)c->body_bytes / 1048576.0 / seconds;
            completed++;
            record_latency(t - c->started_ns);
            break;
        }
        case MODE_HOLD:
            completed++;
            break;
        case MODE_FIRST: {
            uint64_t us = (t - c->conn_started_ns) / 1000;
            if (first_index % 2 == 0) first_lat[first_len++] = (uint32_t)us;
            else repeat_lat[repeat_len++] = (uint32_t)us;
            first_index++;
            completed++;
            break;
        }
        }
    }
    switch (opt.mode) {
    case MODE_KEEPALIVE:
        if (stopping) {
            c->state = ST_SHUTDOWN;
        } else {
            build_request(c);
            c->started_ns = now_ns();
            c->state = ST_WRITE;
        }
        break;
    case MODE_NEWCONN:
    case MODE_FIRST:
        if (opt.mode == MODE_NEWCONN && opt.resume) {
            SSL_SESSION *s = SSL_get1_session(c->ssl);
            if (s) {
                if (c->session) SSL_SESSION_free(c->session);
                c->session = s;
            }
        }
        c->state = ST_SHUTDOWN;
        break;
    case MODE_DOWNLOAD:
        c->state = ST_SHUTDOWN;
        break;
    case MODE_HOLD:
        c->state = ST_HELD;
        hold_established++;
        set_interest(c, 0);
        break;
    }
}

/* After a connection of slot c ended: open the next one if the mode wants it. */
static void schedule_next(struct conn *c) {
    if (stopping) return;
    switch (opt.mode) {
    case MODE_KEEPALIVE:
    case MODE_NEWCONN:
        start_conn(c);
        break;
    case MODE_DOWNLOAD:
        if (downloads_done < opt.count && !stopping) start_conn(c);
        break;
    case MODE_FIRST:
        if (first_index < 2 * opt.count) {
            pending_conn = c;
            pending_at = now_ns() + (uint64_t)(opt.gap_ms * 1e6);
        }
        break;
    case MODE_HOLD:
        break; /* main() starts the next connection */
    }
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static double percentile(uint32_t *v, size_t n, double p) {
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_u32);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i] / 1000.0; /* ms */
}

static double ru_us(const struct rusage *r) {
    return r->ru_utime.tv_sec * 1e6 + r->ru_utime.tv_usec + r->ru_stime.tv_sec * 1e6 + r->ru_stime.tv_usec;
}

static void parse_target(const char *s) {
    char host[64];
    const char *colon = strrchr(s, ':');
    if (!colon || colon - s >= (long)sizeof host) die("--connect wants IP:PORT, got %s", s);
    memcpy(host, s, colon - s);
    host[colon - s] = 0;
    memset(&opt.target, 0, sizeof opt.target);
    opt.target.sin_family = AF_INET;
    opt.target.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &opt.target.sin_addr) != 1) die("--connect: %s is not an IPv4 address", host);
}

static void usage(void) {
    fprintf(stderr,
            "usage: bench-loadgen --mode keepalive|newconn|download|hold|first --connect IP:PORT\n"
            "         [--proxy HOST:PORT (send CONNECT HOST:PORT first)] --host NAME [--path /p]\n"
            "         [--concurrency N] [--warmup S] [--duration S] [--count N] [--no-resume]\n"
            "         [--names PREFIX,SUFFIX,CONNECTPORT (first mode)] [--gap-ms MS (first mode)] [--timeout S]\n"
            "         [--stall S (a connection without any event for S seconds fails; default 5)]\n"
            "         [--h2 STREAMS (keepalive, download: HTTP/2 with STREAMS requests in flight per connection)]\n");
    exit(2);
}

/* Connections with no event for --stall seconds (a peer that lost our bytes) fail instead of holding
   the run until the peer's own timeout. Checked every 50 ms at most. */
static void check_stalls(void) {
    static uint64_t last_check;
    uint64_t t = now_ns();
    if (t - last_check < 50000000ull) return;
    last_check = t;
    int slots = opt.mode == MODE_HOLD ? opt.count : opt.concurrency;
    for (int i = 0; i < slots; i++) {
        struct conn *c = &conns[i];
        if (c->fd < 0 || c->state == ST_IDLE || c->state == ST_HELD) continue;
        if ((double)(t - c->progress_ns) / 1e9 < opt.stall) continue;
        errno = 0;
        char what[96];
        snprintf(what, sizeof what, "stalled for %.0f s (state %d): counted as failed", opt.stall, (int)c->state);
        note_error(c, what);
        close_conn(c);
        schedule_next(c);
    }
}

static void run_loop_until(int (*done)(void), double max_seconds) {
    struct epoll_event events[256];
    uint64_t deadline = now_ns() + (uint64_t)(max_seconds * 1e9);
    while (!done()) {
        check_stalls();
        if (now_ns() > deadline) die("gave up after %.0f s (%lld done, %lld errors)", max_seconds, completed, errors);
        int wait_ms = 50;
        if (pending_conn) {
            uint64_t t = now_ns();
            if (t >= pending_at) {
                struct conn *c = pending_conn;
                pending_conn = NULL;
                start_conn(c);
                continue;
            }
            wait_ms = (int)((pending_at - t) / 1000000) + 1;
            if (wait_ms > 50) wait_ms = 50;
        }
        int n = epoll_wait(epfd, events, 256, wait_ms);
        if (n < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
        for (int i = 0; i < n; i++) drive((struct conn *)events[i].data.ptr);
        /* slots that ended without a successor (errors while stopping) stay idle */
    }
}

static uint64_t phase_end;
static int time_done(void) { return now_ns() >= phase_end; }
static int downloads_finished(void) { return downloads_done >= opt.count; }
static int first_finished(void) { return first_index >= 2 * opt.count; }
static int all_closed(void) { return connections_open == 0; }

static void begin_window(void) {
    getrusage(RUSAGE_SELF, &ru_start);
    window_start_ns = now_ns();
    measuring = 1;
    say("START");
}

static void end_window(void) {
    measuring = 0;
    window_end_ns = now_ns();
    getrusage(RUSAGE_SELF, &ru_end);
    say("END");
}

int main(int argc, char **argv) {
    opt.concurrency = 1;
    opt.warmup = 1;
    opt.duration = 5;
    opt.count = 1;
    opt.resume = 1;
    opt.path = "/";
    opt.timeout = 120;
    opt.stall = 5;
    const char *mode = NULL, *target = NULL, *names = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--mode") && v) mode = argv[++i];
        else if (!strcmp(a, "--connect") && v) target = argv[++i];
        else if (!strcmp(a, "--proxy") && v) opt.proxy_authority = argv[++i];
        else if (!strcmp(a, "--host") && v) opt.host = argv[++i];
        else if (!strcmp(a, "--path") && v) opt.path = argv[++i];
        else if (!strcmp(a, "--concurrency") && v) opt.concurrency = atoi(argv[++i]);
        else if (!strcmp(a, "--warmup") && v) opt.warmup = atof(argv[++i]);
        else if (!strcmp(a, "--duration") && v) opt.duration = atof(argv[++i]);
        else if (!strcmp(a, "--count") && v) opt.count = atoi(argv[++i]);
        else if (!strcmp(a, "--timeout") && v) opt.timeout = atof(argv[++i]);
        else if (!strcmp(a, "--names") && v) names = argv[++i];
        else if (!strcmp(a, "--gap-ms") && v) opt.gap_ms = atof(argv[++i]);
        else if (!strcmp(a, "--stall") && v) opt.stall = atof(argv[++i]);
        else if (!strcmp(a, "--no-resume")) opt.resume = 0;
        else if (!strcmp(a, "--h2") && v) opt.h2_streams = atoi(argv[++i]);
        else usage();
    }
    if (!mode || !target) usage();
    if (!strcmp(mode, "keepalive")) opt.mode = MODE_KEEPALIVE;
    else if (!strcmp(mode, "newconn")) opt.mode = MODE_NEWCONN;
    else if (!strcmp(mode, "download")) opt.mode = MODE_DOWNLOAD;
    else if (!strcmp(mode, "hold")) opt.mode = MODE_HOLD;
    else if (!strcmp(mode, "first")) opt.mode = MODE_FIRST;
    else usage();
    parse_target(target);
    if (opt.mode == MODE_FIRST) {
        static char prefix[128], suffix[128];
        int port = 0;
        if (!names || sscanf(names, "%127[^,],%127[^,],%d", prefix, suffix, &port) != 3)
            die("first mode needs --names PREFIX,SUFFIX,CONNECTPORT");
        opt.name_prefix = prefix;
        opt.name_suffix = suffix;
        opt.connect_port = port;
        opt.concurrency = 1;
        opt.resume = 0;
        opt.host = "first";
    } else if (!opt.host) {
        die("--host NAME is required");
    }
    if (opt.mode == MODE_DOWNLOAD) opt.concurrency = 1;
    if (opt.h2_streams < 0 || opt.h2_streams > 1000) die("--h2 wants 1 to 1000 streams");
    if (opt.h2_streams > 0 && opt.mode != MODE_KEEPALIVE && opt.mode != MODE_DOWNLOAD) die("--h2 works in keepalive and download modes");
    if (opt.concurrency < 1 || opt.count < 1) die("--concurrency and --count must be positive");
    signal(SIGPIPE, SIG_IGN);

    ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) die("SSL_CTX_new failed");
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    static const unsigned char alpn_h2[] = {2, 'h', '2'};
    if (opt.h2_streams > 0) SSL_CTX_set_alpn_protos(ctx, alpn_h2, sizeof alpn_h2);
    else SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn);

    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) die("epoll_create1: %s", strerror(errno));
    int slots = opt.mode == MODE_HOLD ? opt.count : opt.concurrency;
    conns = calloc((size_t)slots, sizeof *conns);
    if (!conns) die("out of memory");
    for (int i = 0; i < slots; i++) {
        conns[i].index = i;
        conns[i].fd = -1;
        conns[i].state = ST_IDLE;
    }
    uint64_t t0 = now_ns();
    switch (opt.mode) {
    case MODE_KEEPALIVE:
    case MODE_NEWCONN:
        for (int i = 0; i < slots; i++) start_conn(&conns[i]);
        phase_end = now_ns() + (uint64_t)(opt.warmup * 1e9);
        run_loop_until(time_done, opt.warmup + opt.timeout);
        begin_window();
        phase_end = now_ns() + (uint64_t)(opt.duration * 1e9);
        run_loop_until(time_done, opt.duration + opt.timeout);
        end_window();
        stopping = 1;
        /* finish what is in flight, then close: keep-alive connections close after their current response */
        run_loop_until(all_closed, opt.timeout);
        break;
    case MODE_DOWNLOAD:
        download_rates = calloc((size_t)opt.count, sizeof(double));
        begin_window();
        start_conn(&conns[0]);
        run_loop_until(downloads_finished, opt.timeout * opt.count);
        end_window();
        stopping = 1;
        run_loop_until(all_closed, opt.timeout);
        break;
    case MODE_HOLD: {
        int initial = opt.concurrency < opt.count ? opt.concurrency : opt.count;
        hold_started = initial;
        for (int i = 0; i < initial; i++) start_conn(&conns[i]);
        /* each finished or failed slot starts the next unstarted one: reuse schedule_next via index */
        struct epoll_event events[256];
        uint64_t deadline = now_ns() + (uint64_t)(opt.timeout * 1e9);
        while (hold_established + errors < opt.count) {
            int errors_before = (int)errors;
            check_stalls();
            for (int e = errors_before; e < (int)errors && hold_started < opt.count; e++) start_conn(&conns[hold_started++]);
            if (now_ns() > deadline) die("hold: only %d of %d connections after %.0f s", hold_established, opt.count, opt.timeout);
            int n = epoll_wait(epfd, events, 256, 50);
            if (n < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
            for (int i = 0; i < n; i++) {
                struct conn *c = events[i].data.ptr;
                enum state before = c->state;
                drive(c);
                if (before != ST_HELD && (c->state == ST_HELD || c->state == ST_IDLE) && hold_started < opt.count) {
                    struct conn *next = &conns[hold_started++];
                    start_conn(next);
                }
            }
        }
        char line[64];
        snprintf(line, sizeof line, "HELD %d", hold_established);
        say(line);
        /* wait for stdin EOF (the driver measured) or the duration, watching for closes */
        uint64_t hold_end = now_ns() + (uint64_t)(opt.duration * 1e9);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLHUP, .data.ptr = NULL};
        epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &ev);
        int stdin_done = 0;
        while (!stdin_done && now_ns() < hold_end) {
            int n = epoll_wait(epfd, events, 256, 50);
            for (int i = 0; i < n; i++) {
                if (events[i].data.ptr == NULL) {
                    char tmp[64];
                    if (read(0, tmp, sizeof tmp) <= 0) stdin_done = 1;
                } else {
                    drive(events[i].data.ptr);
                }
            }
        }
        for (int i = 0; i < slots; i++)
            if (conns[i].fd >= 0) close_conn(&conns[i]);
        break;
    }
    case MODE_FIRST:
        first_lat = calloc((size_t)opt.count, sizeof(uint32_t));
        repeat_lat = calloc((size_t)opt.count, sizeof(uint32_t));
        begin_window();
        start_conn(&conns[0]);
        run_loop_until(first_finished, opt.timeout * opt.count);
        end_window();
        stopping = 1;
        run_loop_until(all_closed, opt.timeout);
        break;
    }

    double seconds = (double)(window_end_ns - window_start_ns) / 1e9;
    double cpu_us = ru_us(&ru_end) - ru_us(&ru_start);
    printf("RESULT {\"mode\":\"%s\",\"requests\":%lld,\"errors\":%lld,\"seconds\":%.6f,\"bytes\":%lld,"
           "\"handshakes\":%lld,\"resumed\":%lld,\"loadgen_cpu_us\":%.0f,\"total_seconds\":%.3f",
           mode, completed, errors, seconds, opt.mode == MODE_DOWNLOAD ? bytes_total : measured_bytes, handshakes,
           resumed, cpu_us, (double)(now_ns() - t0) / 1e9);
    if (opt.mode == MODE_KEEPALIVE || opt.mode == MODE_NEWCONN || opt.mode == MODE_DOWNLOAD) {
        size_t n = latencies_len;
        double p50 = percentile(latencies, n, 0.50);
        double p99 = percentile(latencies, n, 0.99);
        /* A lost readiness event shows as a request that waits for a timer: count the ones over half a second. */
        size_t over_500ms = 0;
        uint32_t slowest = 0;
        for (size_t i = 0; i < n; i++) {
            if (latencies[i] > 500000) over_500ms++;
            if (latencies[i] > slowest) slowest = latencies[i];
        }
        printf(",\"rps\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"over_500ms\":%zu",
               seconds > 0 ? completed / seconds : 0, p50, p99, slowest / 1000.0, over_500ms);
    }
    if (opt.mode == MODE_DOWNLOAD) {
        printf(",\"mib_per_s\":[");
        for (int i = 0; i < downloads_done; i++) printf("%s%.2f", i ? "," : "", download_rates[i]);
        printf("]");
    }
    if (opt.mode == MODE_HOLD) printf(",\"held\":%d", hold_established);
    if (opt.mode == MODE_FIRST) {
        printf(",\"first_us\":[");
        for (int i = 0; i < first_len; i++) printf("%s%u", i ? "," : "", first_lat[i]);
        printf("],\"repeat_us\":[");
        for (int i = 0; i < repeat_len; i++) printf("%s%u", i ? "," : "", repeat_lat[i]);
        printf("]");
    }
    printf("}\n");
    fflush(stdout);
    return 0;
}
