import Foundation

/// A HAR 1.2 document of chosen flows (the web UI's "download HAR" of what is on screen): exchanges as
/// entries, refused, failed and inconclusive handshakes in the custom `log._tlsErrors`, as `--har` writes them.
package enum FlowHAR {
    private struct Document: Encodable {
        struct Creator: Encodable {
            let name: String
            let version: String
        }

        struct Log: Encodable {
            let version = "1.2"
            let creator: Creator
            let pages: [String] = []
            let entries: [HAREntry]
            let _tlsErrors: [HARTLSError]
        }

        let log: Log
    }

    /// The HAR of `flows` (in their order), written by `creatorVersion` of mitm-proxy.
    package static func document(_ flows: [Flow], builder: HARBuilder, creatorVersion: String) throws -> Data {
        var entries: [HAREntry] = []
        var errors: [HARTLSError] = []
        for flow in flows {
            switch flow.content {
            case .exchange(let record):
                entries.append(builder.entry(record))
            case .handshake(let verdict)
            where verdict.verdict.kind != .intercepted && verdict.verdict.kind != .unused
                || verdict.acceptedInvalidCertificate:
                errors.append(builder.tlsError(verdict))
            case .handshake, .tunnel:
                continue
            }
        }
        let document = Document(
            log: .init(
                creator: .init(name: "mitm-proxy", version: creatorVersion), entries: entries, _tlsErrors: errors))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return try encoder.encode(document)
    }
}
