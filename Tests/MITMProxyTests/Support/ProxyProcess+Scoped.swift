extension ProxyProcess {
    /// Starts the binary with `arguments`, runs `body` with it, and stops it afterwards, also when `body` throws
    /// (a failed `#require` must not leave a proxy running).
    static func running<T>(_ arguments: [String], _ body: (ProxyProcess) async throws -> T) async throws -> T {
        let proxy = try await start(arguments)
        do {
            let value = try await body(proxy)
            await proxy.stop()
            return value
        } catch {
            await proxy.stop()
            throw error
        }
    }
}
