import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal whose follower side a child process writes to, so that it sees a terminal on stdout.
final class PseudoTerminal: @unchecked Sendable {
    // @unchecked Sendable: the descriptors never change; reads happen on one task at a time.
    private let leader: Int32
    /// The side the child gets.
    let follower: FileHandle

    init() throws {
        // posix_openpt, grantpt, unlockpt and ptsname need _XOPEN_SOURCE, which Swift's Glibc module does not set: look them up.
        let libc = dlopen(nil, RTLD_NOW)
        typealias Open = @convention(c) (Int32) -> Int32
        typealias Step = @convention(c) (Int32) -> Int32
        typealias Name = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
        guard let openSymbol = dlsym(libc, "posix_openpt"), let grantSymbol = dlsym(libc, "grantpt"),
            let unlockSymbol = dlsym(libc, "unlockpt"), let nameSymbol = dlsym(libc, "ptsname")
        else {
            throw SubprocessError(description: "no pseudo-terminal functions in libc")
        }
        leader = unsafeBitCast(openSymbol, to: Open.self)(O_RDWR | O_NOCTTY)
        guard leader >= 0, unsafeBitCast(grantSymbol, to: Step.self)(leader) == 0,
            unsafeBitCast(unlockSymbol, to: Step.self)(leader) == 0,
            let name = unsafeBitCast(nameSymbol, to: Name.self)(leader)
        else {
            throw SubprocessError(description: "cannot open a pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let descriptor = open(String(cString: name), O_RDWR | O_NOCTTY)
        guard descriptor >= 0 else { throw SubprocessError(description: "cannot open \(String(cString: name))") }
        follower = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    deinit { close(leader) }

    /// What the child wrote until `marker` and the rest of that line appeared, or an error after `timeout`.
    func read(until marker: String, timeout: Duration) async throws -> String {
        let leader = leader
        return try await DedicatedThread.run {
            let deadline = Date().addingTimeInterval(Double(timeout.components.seconds))
            var bytes: [UInt8] = []
            while Date() < deadline {
                let text = String(decoding: bytes, as: UTF8.self)
                if let range = text.range(of: marker), text[range.upperBound...].contains("\n") { return text }
                var entry = pollfd(fd: leader, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 200) > 0 else { continue }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = buffer.withUnsafeMutableBytes { Glibc.read(leader, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                bytes += buffer[..<count]
            }
            throw SubprocessError(
                description: "no \(marker.debugDescription) on the terminal: \(String(decoding: bytes, as: UTF8.self))")
        }
    }
}
