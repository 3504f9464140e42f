import ArgumentParser
import Foundation
import MITMTLS

OpenSSLLibrary.keepStateUntilProcessExit()

// Usage errors exit with 2 (as the README promises CI scripts), not ArgumentParser's 64.
do {
    var command = try MITMProxyCommand.parseAsRoot()
    try command.run()
} catch {
    if MITMProxyCommand.exitCode(for: error) == .validationFailure {
        FileHandle.standardError.write(Data((MITMProxyCommand.fullMessage(for: error) + "\n").utf8))
        exit(2)
    }
    MITMProxyCommand.exit(withError: error)
}
