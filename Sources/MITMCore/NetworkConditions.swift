/// The network a throttled connection simulates between the client and the proxy: bandwidth each way,
/// latency added per round trip, and loss; or no network at all (`offline`).
///
/// Loss at this layer: the proxy relays a TCP byte stream, so it cannot drop bytes without corrupting
/// what the app receives. What a lost packet does to a TCP connection is delay it: the sender waits a
/// retransmission timeout and sends it again. So `loss` is the probability that each 1,460-byte segment
/// is held back for one retransmission timeout (`max(200 ms, 2 × latency)`) before it goes, and again
/// with the same probability: the stalls and the throughput an app sees on a lossy link, never broken data.
public struct NetworkConditions: Sendable, Equatable, CustomStringConvertible {
    /// Bits per second toward the client (downloads); nil for no limit.
    public var downBitsPerSecond: Double?
    /// Bits per second from the client (uploads); nil for no limit.
    public var upBitsPerSecond: Double?
    /// Seconds added per round trip: half to each direction.
    public var latency: Double
    /// Probability (0 to 1) that a segment is held back for a retransmission timeout.
    public var loss: Double
    /// No connection is let through at all.
    public var isOffline: Bool
    /// The profile name it was given as (`3g`), if any.
    public var profileName: String?

    /// Conditions with the given limits.
    public init(
        down: Double? = nil, up: Double? = nil, latency: Double = 0, loss: Double = 0, isOffline: Bool = false,
        profileName: String? = nil
    ) {
        downBitsPerSecond = down
        upBitsPerSecond = up
        self.latency = latency
        self.loss = loss
        self.isOffline = isOffline
        self.profileName = profileName
    }

    /// The named profiles, close to Apple's Network Link Conditioner presets.
    public static let profiles: [(name: String, conditions: NetworkConditions)] = [
        ("edge", NetworkConditions(down: 240e3, up: 200e3, latency: 0.8, profileName: "edge")),
        ("3g", NetworkConditions(down: 780e3, up: 330e3, latency: 0.2, profileName: "3g")),
        ("lte", NetworkConditions(down: 50e6, up: 10e6, latency: 0.1, profileName: "lte")),
        ("offline", NetworkConditions(isOffline: true, profileName: "offline")),
    ]

    /// The keys of an explicit profile.
    public static let keys = ["down", "up", "latency", "loss"]

    /// The bandwidths a profile may give, in bits per second: 1 bit/s to 100 Gbit/s.
    public static let bandwidthRange: ClosedRange<Double> = 1...100e9
    /// The latencies a profile may give, in seconds per round trip: up to an hour.
    public static let latencyRange: ClosedRange<Double> = 0...3_600

    /// Parses a profile name (`3g`, `edge`, `lte`, `offline`) or an explicit `down=256kbit,up=64kbit,latency=300ms,loss=1%`.
    public init(parsing text: String) throws(RuleError) {
        let lowered = text.lowercased().trimmingSpaces
        if let named = Self.profiles.first(where: { $0.name == lowered }) {
            self = named.conditions
            return
        }
        guard lowered.contains("=") else {
            throw RuleError(
                "unknown network profile \"\(text)\": use \(Self.profiles.map(\.name).joined(separator: ", ")) "
                    + "or down=256kbit,up=64kbit,latency=300ms,loss=1%")
        }
        self.init()
        for part in lowered.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
            guard pair.count == 2, !pair[1].isEmpty else {
                throw RuleError("\"\(part)\" in \"\(text)\" is not KEY=VALUE")
            }
            switch pair[0] {
            case "down", "up":
                guard let bits = QuantityText.bitsPerSecond(pair[1]) else {
                    throw RuleError("\(pair[0])=\(pair[1]) is not a bandwidth like 256kbit or 1.5mbit")
                }
                guard Self.bandwidthRange.contains(bits) else {
                    throw RuleError(
                        "\(pair[0])=\(pair[1]) is outside what can be simulated: \(pair[0]) must be between 1bit and 100gbit"
                    )
                }
                if pair[0] == "down" { downBitsPerSecond = bits } else { upBitsPerSecond = bits }
            case "latency":
                guard let seconds = QuantityText.seconds(pair[1]) else {
                    throw RuleError("latency=\(pair[1]) is not a duration like 300ms or 1s")
                }
                guard Self.latencyRange.contains(seconds) else {
                    throw RuleError(
                        "latency=\(pair[1]) is outside what can be simulated: latency must be between 0ms and 60m")
                }
                latency = seconds
            case "loss":
                let number = pair[1].hasSuffix("%") ? Double(pair[1].dropLast()).map { $0 / 100 } : Double(pair[1])
                guard let number, (0...1).contains(number) else {
                    throw RuleError("loss=\(pair[1]) is not a probability like 2% or 0.02")
                }
                loss = number
            default:
                throw RuleError("unknown key \"\(pair[0])\" in \"\(text)\": use \(Self.keys.joined(separator: ", "))")
            }
        }
    }

    /// `down 512kbit/s, up unlimited, +300ms per round trip, 1% loss`, or `offline`.
    public var description: String {
        if isOffline { return "offline" }
        var parts = [
            "down \(downBitsPerSecond.map(QuantityText.bandwidth) ?? "unlimited")",
            "up \(upBitsPerSecond.map(QuantityText.bandwidth) ?? "unlimited")",
        ]
        if latency > 0 { parts.append("+\(QuantityText.duration(latency)) per round trip") }
        if loss > 0 { parts.append("\(QuantityText.percent(loss)) loss") }
        return (profileName.map { "\($0): " } ?? "") + parts.joined(separator: ", ")
    }

    /// The lane toward the client.
    public func downLane() -> ThrottleLane {
        ThrottleLane(bytesPerSecond: downBitsPerSecond.map { $0 / 8 }, oneWayDelay: latency / 2, loss: loss)
    }

    /// The lane from the client.
    public func upLane() -> ThrottleLane {
        ThrottleLane(bytesPerSecond: upBitsPerSecond.map { $0 / 8 }, oneWayDelay: latency / 2, loss: loss)
    }
}

extension QuantityText {
    /// `2%`, `0.5%`.
    static func percent(_ fraction: Double) -> String {
        let value = (fraction * 10_000).rounded() / 100
        return value == value.rounded() ? "\(QuantityText.whole(value))%" : "\(value)%"
    }
}
