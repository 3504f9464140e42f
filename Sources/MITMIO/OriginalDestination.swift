#if canImport(Glibc)
import Glibc
#endif

extension SocketAddress {
    /// Netfilter's `SO_ORIGINAL_DST` (IPv4, level `SOL_IP`) and `IP6T_SO_ORIGINAL_DST` (IPv6, level `SOL_IPV6`): both 80,
    /// neither exported by Glibc's module.
    private static let originalDestinationOption: Int32 = 80

    /// Where a connection that a `REDIRECT` (nftables or iptables) sent to this machine was going before it was
    /// redirected: its original destination address and port; nil when the system kept none (not redirected, or not Linux).
    public static func originalDestination(of descriptor: Int32) -> SocketAddress? {
        guard let local = local(of: descriptor) else { return nil }
        // An IPv4 client of a dual-stack IPv6 listener keeps its original destination at the IPv4 level.
        let levels = local.family == AF_INET6 ? [Int32(IPPROTO_IPV6), Int32(IPPROTO_IP)] : [Int32(IPPROTO_IP)]
        for level in levels {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let result = withUnsafeMutablePointer(to: &storage) {
                getsockopt(descriptor, level, originalDestinationOption, $0, &length)
            }
            if result == 0 { return SocketAddress(storage: storage, length: length) }
        }
        return nil
    }
}
