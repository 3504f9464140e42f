import Foundation

/// The outcome of a finished child process.
struct ProcessOutput {
    let status: Int32
    let standardOutput: Data
    let standardError: String

    var text: String { String(decoding: standardOutput, as: UTF8.self) }
}

/// Runs programs for tests: `openssl` to make and check certificates, the built CLI.
enum Subprocess {
    /// Runs `arguments` (the first is looked up in PATH) and waits for it.
    static func run(_ arguments: [String], input: Data? = nil) throws -> ProcessOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        return try run(process, input: input)
    }

    /// Runs the executable at `path` with `arguments`.
    static func run(executable path: String, _ arguments: [String]) throws -> ProcessOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        return try run(process, input: nil)
    }

    /// Runs a shell pipeline with `sh -c`.
    static func shell(_ command: String) throws -> ProcessOutput {
        try run(["sh", "-c", command])
    }

    private static func run(_ process: Process, input: Data?) throws -> ProcessOutput {
        let output = Pipe()
        let errors = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = standardInput
        try process.run()
        if let input { standardInput.fileHandleForWriting.write(input) }
        try standardInput.fileHandleForWriting.close()
        let errorData = ErrorCollector(errors.fileHandleForReading)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessOutput(status: process.terminationStatus, standardOutput: data, standardError: errorData.wait())
    }
}

/// Reads a pipe to its end on another thread, so a full stderr pipe cannot block the child.
private final class ErrorCollector: @unchecked Sendable {
    // @unchecked Sendable: `data` is written once by the reading thread before `done` is signalled.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        DispatchQueue.global().async {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }
    }

    func wait() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
