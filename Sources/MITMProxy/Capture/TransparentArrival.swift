import MITMIO

/// Where a connection to the transparent listener was going before the system redirected it (`SO_ORIGINAL_DST`), read
/// at accept; nil when it was not redirected (a client that connected to the listener itself).
struct TransparentArrival {
    let originalDestination: SocketAddress?
}
