#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: the call's name and its errno, with the C library's text.
public struct SystemCallError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The system call that failed, e.g. `connect`.
    public let call: String
    /// The errno value it left.
    public let errno: Int32

    /// The C library's description of `errno`, prefixed by the call.
    public var description: String {
        "\(call): \(String(cString: strerror(errno)))"
    }

    /// Creates the error for `call` that failed with `errno`.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }
}

/// The outcome of a nonblocking system call.
public enum SystemCallResult<Value> {
    /// The call succeeded.
    case done(Value)
    /// The call would block (`EAGAIN`/`EWOULDBLOCK`/`EINPROGRESS`): wait for readiness.
    case wouldBlock
}

/// Runs a system call that returns -1 and sets errno on failure: retries `EINTR`, maps
/// `EAGAIN`/`EWOULDBLOCK`/`EINPROGRESS` to `.wouldBlock`, throws every other errno with the call's name.
@inline(__always)
public func systemCall<T: BinaryInteger>(
    _ name: @autoclosure () -> String,
    _ body: () -> T
) throws(SystemCallError) -> SystemCallResult<T> {
    while true {
        let result = body()
        if result >= 0 { return .done(result) }
        let code = errno
        switch code {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK, EINPROGRESS: return .wouldBlock
        default: throw SystemCallError(call: name(), errno: code)
        }
    }
}
