import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Moves bytes to a child's stdin and from its stdout and stderr with poll(2), so no full pipe can block the others.
struct PipePump {
    private static let pieceSize = 64 * 1024

    private let input: [UInt8]
    private var inputOffset = 0
    private var stdinHandle: FileHandle?
    private var stdoutHandle: FileHandle?
    private var stderrHandle: FileHandle?
    private(set) var stdout: [UInt8] = []
    private(set) var stderr: [UInt8] = []

    /// Takes over the parent's ends of the pipes; `stdin` is nil when the child's stdin is not a pipe.
    init(input: [UInt8], stdin: FileHandle?, stdout: FileHandle, stderr: FileHandle) {
        self.input = input
        stdinHandle = stdin
        stdoutHandle = stdout
        stderrHandle = stderr
        for handle in [stdin, stdout, stderr].compactMap({ $0 }) {
            let flags = fcntl(handle.fileDescriptor, F_GETFL)
            _ = fcntl(handle.fileDescriptor, F_SETFL, flags | O_NONBLOCK)
        }
        if input.isEmpty { closeStdin() }
    }

    /// Pumps until stdin is written and both outputs reach end of file, or until `processExited` and what it wrote
    /// is read: a process started meanwhile by another test can inherit the pipes' write ends and hold them open
    /// past the child's exit. False if `deadline` came first.
    mutating func run(until deadline: DispatchTime, processExited: () -> Bool = { false }) -> Bool {
        while stdinHandle != nil || stdoutHandle != nil || stderrHandle != nil {
            if processExited() {
                if let descriptor = stdoutHandle?.fileDescriptor { _ = drain(descriptor, into: &stdout) }
                if let descriptor = stderrHandle?.fileDescriptor { _ = drain(descriptor, into: &stderr) }
                return true
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline.uptimeNanoseconds else { return false }
            let waitMilliseconds = Int32(min((deadline.uptimeNanoseconds - now) / 1_000_000 + 1, 100))
            var descriptors: [pollfd] = []
            if let stdinHandle {
                descriptors.append(pollfd(fd: stdinHandle.fileDescriptor, events: Int16(POLLOUT), revents: 0))
            }
            for handle in [stdoutHandle, stderrHandle].compactMap({ $0 }) {
                descriptors.append(pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), waitMilliseconds)
            if ready < 0 && errno != EINTR { return false }
            guard ready > 0 else { continue }
            for descriptor in descriptors where descriptor.revents != 0 {
                if descriptor.fd == stdinHandle?.fileDescriptor {
                    writeInput()
                } else if descriptor.fd == stdoutHandle?.fileDescriptor {
                    if !drain(descriptor.fd, into: &stdout) { close(&stdoutHandle) }
                } else if descriptor.fd == stderrHandle?.fileDescriptor {
                    if !drain(descriptor.fd, into: &stderr) { close(&stderrHandle) }
                }
            }
        }
        return true
    }

    /// Closes whatever is still open.
    mutating func closeAll() {
        closeStdin()
        close(&stdoutHandle)
        close(&stderrHandle)
    }

    private mutating func writeInput() {
        guard let descriptor = stdinHandle?.fileDescriptor else { return }
        while inputOffset < input.count {
            let count = min(Self.pieceSize, input.count - inputOffset)
            let written = input.withUnsafeBytes { write(descriptor, $0.baseAddress! + inputOffset, count) }
            if written > 0 {
                inputOffset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return
            } else {
                break
            }
        }
        closeStdin()
    }

    /// Reads everything available; false at end of file or on an error.
    private func drain(_ descriptor: Int32, into output: inout [UInt8]) -> Bool {
        var buffer = [UInt8](repeating: 0, count: Self.pieceSize)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                output += buffer[..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
            }
        }
    }

    private mutating func closeStdin() {
        close(&stdinHandle)
    }

    private func close(_ handle: inout FileHandle?) {
        try? handle?.close()
        handle = nil
    }
}
