import Foundation
import MITMCore
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Captures the first bytes a real TLS client sends to a loopback listener on an ephemeral port.
enum ClientHelloCapture {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What the client sent until the parser decided, and the decision.
    struct Captured: Sendable {
        var bytes: [UInt8]
        var result: ClientHelloParseResult
    }

    private static let timeoutMilliseconds: Int32 = 10_000

    /// Listens on 127.0.0.1 port 0, starts `executable` with the arguments `command(port)` builds, and reads its first flight.
    static func capture(
        _ executable: String, _ command: @escaping @Sendable (UInt16) -> [String]
    ) async throws -> Captured {
        try await DedicatedThread.run { try captureBlocking(executable, command) }
    }

    private static func captureBlocking(_ executable: String, _ command: (UInt16) -> [String]) throws -> Captured {
        let listener = try makeListener()
        defer { close(listener.descriptor) }
        let client = try ChildProcess(
            path: try Subprocess.executablePath(executable), arguments: command(listener.port))
        defer {
            client.terminate()
            if !client.waitForExit(timeout: .seconds(10)) { client.kill() }
        }
        let connection = try acceptClient(listener.descriptor)
        defer { close(connection) }
        return try readUntilDecided(connection)
    }

    private static func readUntilDecided(_ connection: Int32) throws -> Captured {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            try waitReadable(connection, what: "the client's bytes")
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                throw Failure(
                    description: "client closed after \(bytes.count) bytes: \(ClientHelloParser.parse(bytes))")
            }
            bytes += buffer[..<count]
            let result = ClientHelloParser.parse(bytes)
            if result != .needMoreData {
                return Captured(bytes: bytes, result: result)
            }
        }
    }

    private static func makeListener() throws -> (descriptor: Int32, port: UInt16) {
        #if os(Linux)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0
                    && listen(descriptor, 1) == 0
                    && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw Failure(description: "could not listen on 127.0.0.1 port 0: errno \(errno)")
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    private static func acceptClient(_ listener: Int32) throws -> Int32 {
        try waitReadable(listener, what: "the client to connect")
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { throw Failure(description: "accept failed: errno \(errno)") }
        return connection
    }

    private static func waitReadable(_ descriptor: Int32, what: String) throws {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, timeoutMilliseconds)
            if ready > 0 { return }
            if ready < 0 && errno == EINTR { continue }
            throw Failure(description: "timed out after \(timeoutMilliseconds) ms waiting for \(what)")
        }
    }
}
