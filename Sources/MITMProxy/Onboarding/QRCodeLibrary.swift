import Foundation

/// libqrencode, loaded at run time with `dlopen` when the start banner wants a QR code: the proxy neither links nor
/// builds against it, and runs the same without it (the banner then says how to get it).
// @unchecked Sendable: the handle and the function pointers never change after loading, and libqrencode's encoder is
// reentrant (it keeps no global state between calls).
@_spi(CommandLine) public final class QRCodeLibrary: @unchecked Sendable {
    private typealias EncodeString =
        @convention(c) (UnsafePointer<CChar>?, Int32, Int32, Int32, Int32) -> UnsafeMutableRawPointer?
    private typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void

    private let handle: UnsafeMutableRawPointer
    private let encodeString: EncodeString
    private let free: Free

    /// The names tried, Debian's package `libqrencode4` first.
    public static let candidateNames = ["libqrencode.so.4", "libqrencode.so", "libqrencode.4.dylib"]

    /// What to install when it cannot be loaded.
    public static let installHint =
        "install libqrencode (Debian/Ubuntu: apt-get install libqrencode4; macOS: brew install qrencode)"

    /// The library, or nil when none of `candidateNames` loads or a symbol is missing.
    public static func load() -> QRCodeLibrary? {
        for name in candidateNames {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { continue }
            guard let encode = dlsym(handle, "QRcode_encodeString"), let free = dlsym(handle, "QRcode_free") else {
                dlclose(handle)
                continue
            }
            return QRCodeLibrary(
                handle: handle, encode: unsafeBitCast(encode, to: EncodeString.self),
                free: unsafeBitCast(free, to: Free.self))
        }
        return nil
    }

    private init(handle: UnsafeMutableRawPointer, encode: EncodeString, free: @escaping Free) {
        self.handle = handle
        self.encodeString = encode
        self.free = free
    }

    deinit { dlclose(handle) }

    /// The modules (`true` = dark) of `text` as a QR code at error correction level M, in byte mode, the smallest
    /// version that fits; nil when the library refuses it (too long).
    public func modules(for text: String) -> [[Bool]]? {
        // QR_ECLEVEL_M = 1, QR_MODE_8 = 2 in qrencode.h; version 0 picks the smallest; case-sensitive.
        guard let code = text.withCString({ encodeString($0, 0, 1, 2, 1) }) else { return nil }
        defer { free(code) }
        // struct QRcode { int version; int width; unsigned char *data; }: data holds width x width bytes, bit 0 set = dark.
        let width = Int(code.load(fromByteOffset: MemoryLayout<Int32>.stride, as: Int32.self))
        // Two ints take 8 bytes, which keeps the pointer after them aligned on 32- and 64-bit machines alike.
        let data = code.load(fromByteOffset: 2 * MemoryLayout<Int32>.stride, as: UnsafeMutablePointer<UInt8>.self)
        guard width > 0 else { return nil }
        return (0..<width).map { row in (0..<width).map { column in data[row * width + column] & 1 == 1 } }
    }
}
