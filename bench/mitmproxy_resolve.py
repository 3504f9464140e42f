"""mitmproxy addon for the benchmark: every *.bench.test name resolves to 127.0.0.1.

mitmproxy has no --resolve option (mitm-proxy's `--resolve HOST:ADDRESS`); this rewrites the
upstream address before mitmproxy connects, keeping the port and the SNI the client asked for.
"""


class ResolveBenchNames:
    def server_connect(self, data):
        host, port = data.server.address
        if host == "bench.test" or host.endswith(".bench.test"):
            data.server.address = ("127.0.0.1", port)


addons = [ResolveBenchNames()]
