import MITMCore
import MITMTLS

/// What the run learned of each upstream (its certificate's names, the protocol it chose for an ALPN offer), so that
/// a later client of the host gets its certificate without waiting for the upstream's handshake: both handshakes run
/// at once (`ConnectionLife.State.overlapping`). Shared by the loops (in a lock).
struct FirstContactMemo {
    /// An upstream as the client reaches it: the tunnel's target and the name the client asked for.
    struct Key: Hashable {
        let host: String
        let port: Int
        let serverName: String
    }

    private struct Learned {
        /// The forged names for the upstream's last certificate (`ForgeNames`), the asked-for name first.
        var names: [SubjectAlternativeName]
        /// The protocol the upstream chose per offer; nil inside: it chose none.
        var choices: [[String]: String?]
    }

    private var entries: [Key: Learned] = [:]
    static let capacity = 4_096

    /// The upstream behind `key` showed a certificate forged as `names` and chose `chose` of `offered`.
    mutating func learn(_ key: Key, names: [SubjectAlternativeName], offered: [String], chose: String?) {
        if entries.count >= Self.capacity, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
        func update(_ learned: inout Learned) {
            learned.names = names
            learned.choices[offered] = .some(chose)
        }
        update(&entries[key, default: Learned(names: names, choices: [:])])
    }

    /// How to answer a client of `key` whose offer goes upstream as `upstreamOffer`, before the upstream answers.
    func plan(_ key: Key, upstreamOffer: [String]) -> FirstContactPlan {
        let learned = entries[key]
        let names = learned?.names ?? [ForgeNames.name(for: key.serverName)]
        guard upstreamOffer.contains("h2") else {
            // Whatever the upstream picks of an offer without h2, both legs speak HTTP/1.
            return .overlap(names: names, clientALPN: upstreamOffer)
        }
        guard let choice = learned?.choices[upstreamOffer] else { return .sequential }
        return .overlap(names: names, clientALPN: ALPNPolicy.clientOffer(upstreamChose: choice))
    }

    /// Whether the protocol the client agreed to differs from the upstream's choice in what the relay speaks.
    static func protocolChanged(clientGot: String?, upstreamChose: String?) -> Bool {
        (clientGot == "h2") != (upstreamChose == "h2")
    }
}

/// The client's handshake before the upstream answers, or after.
enum FirstContactPlan: Equatable {
    /// Wait for the upstream's handshake: its protocol is not known yet.
    case sequential
    /// Start the client's handshake now, with a certificate for `names` and ALPN `clientALPN`.
    case overlap(names: [SubjectAlternativeName], clientALPN: [String])
}
