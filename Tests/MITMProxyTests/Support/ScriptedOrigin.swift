/// `Fixtures/scripted_origin.py`: a raw origin with one behaviour (see the script's docstring).
enum ScriptedOrigin {
    static func start(_ behavior: String, _ transport: OriginServer.Transport = .plainHTTP) async throws -> OriginServer
    {
        try await OriginServer.start(
            transport, script: RepositoryLayout.fixtures + "/scripted_origin.py",
            extraArguments: ["--behavior", behavior])
    }
}
