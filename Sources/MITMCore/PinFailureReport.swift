import Foundation

/// A pin-validation failure report as TrustKit (and libraries that copy its format) POSTs it when a pin
/// fails, recognised by the shape of the JSON body, wherever it was posted.
public struct PinFailureReport: Sendable, Equatable, Codable {
    /// `noted-hostname`: the configured domain whose pins failed.
    public var notedHostname: String
    /// `hostname`: the host the app was connecting to.
    public var hostname: String?
    /// `port`.
    public var port: Int?
    /// `enforce-pinning`: false when the app only reports and connects anyway.
    public var enforcePinning: Bool?
    /// `include-subdomains`.
    public var includeSubdomains: Bool?
    /// `known-pins`, as sent (`pin-sha256="..."`).
    public var knownPins: [String]
    /// How many certificates `validated-certificate-chain` held (the chain the app saw).
    public var validatedChainLength: Int
    /// `app-bundle-id`.
    public var appBundleID: String?
    /// Where the report was posted (`https://reports.example.com/log`).
    public var postedTo: String
    /// The client that posted it.
    public var client: String?
    /// The connection that carried it.
    public var connectionID: Int

    /// The report in `record`'s request body, or nil when the body is not a JSON object with `noted-hostname`
    /// and `known-pins` or `validated-certificate-chain`.
    public init?(_ record: ExchangeRecord) {
        guard !record.requestBody.bytes.isEmpty,
            let object = try? JSONSerialization.jsonObject(with: Data(record.requestBody.bytes)) as? [String: Any],
            let noted = object["noted-hostname"] as? String, !noted.isEmpty,
            object["known-pins"] != nil || object["validated-certificate-chain"] != nil
        else { return nil }
        notedHostname = noted.lowercased()
        hostname = (object["hostname"] as? String)?.lowercased()
        port = (object["port"] as? NSNumber)?.intValue
        enforcePinning = Self.bool(object["enforce-pinning"])
        includeSubdomains = Self.bool(object["include-subdomains"])
        knownPins = (object["known-pins"] as? [Any])?.compactMap { $0 as? String } ?? []
        validatedChainLength = (object["validated-certificate-chain"] as? [Any])?.count ?? 0
        appBundleID = object["app-bundle-id"] as? String
        postedTo = record.url
        client = record.client
        connectionID = record.connectionID
    }

    /// Whether the app reports without blocking: `enforce-pinning` is false.
    public var isReportOnly: Bool { enforcePinning == false }

    /// One line: what failed, who reported it, and whether the app blocked.
    public var summary: String {
        let target =
            hostname.map { host in port.map { "\(host):\($0)" } ?? host }.map { " (connecting to \($0))" } ?? ""
        let app = appBundleID.map { " by \($0)" } ?? ""
        let enforcement: String
        switch enforcePinning {
        case false?:
            enforcement =
                "enforce-pinning false: the app only reports and connects anyway; report-only pinning is not pinning"
        case true?: enforcement = "enforce-pinning true: the app refused the connection and reported it"
        case nil: enforcement = "enforce-pinning not given"
        }
        return "pin-failure report for \(notedHostname)\(target)\(app), posted to \(postedTo): "
            + "\(knownPins.count) known pin\(knownPins.count == 1 ? "" : "s"), a chain of \(validatedChainLength); \(enforcement)"
    }

    /// JSON booleans arrive as NSNumber; TrustKit sends true booleans, some ports send 0/1 or "true".
    private static func bool(_ value: Any?) -> Bool? {
        if let flag = value as? Bool { return flag }
        if let text = value as? String { return ["true", "1", "yes"].contains(text.lowercased()) }
        return nil
    }
}
