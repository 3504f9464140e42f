/// How long the proxy waits before it answers wrong `--proxy-auth` credentials, per client address: the first wrong
/// try is answered at once (a typo), each further one in a row waits twice as long, up to `longestDelay`, so guessing
/// the password from one address gets slow while a client that sends the right credentials is never held up. An
/// address's count is forgotten after `quietInterval` without a wrong try, or when it sends the right credentials.
/// Times are monotonic seconds given with each event, so the machine is tested with any clock.
public struct CredentialBackoff: Sendable {
    /// What the proxy saw from a client.
    public enum Event: Sendable, Equatable {
        /// Wrong (or malformed) credentials from `address` at `time`.
        case rejected(address: String, at: Double)
        /// The right credentials from `address`.
        case accepted(address: String)
    }

    /// What the proxy does next.
    public enum Action: Sendable, Equatable {
        /// Answer now (accepted, or a first wrong try).
        case answerNow
        /// Answer the `407` (or SOCKS5 failure) after `seconds`.
        case answerAfter(seconds: Double)
    }

    /// One address's wrong tries in a row.
    enum AddressState: Sendable, Equatable {
        case failing(count: Int, lastAt: Double)
    }

    public static let firstDelay = 0.25
    public static let longestDelay = 4.0
    public static let quietInterval = 300.0
    /// Addresses remembered at most; the one quiet longest is forgotten first.
    public static let addressLimit = 4096

    private var addresses: [String: AddressState] = [:]

    public init() {}

    public mutating func handle(_ event: Event) -> Action {
        switch event {
        case .accepted(let address):
            addresses[address] = nil
            return .answerNow
        case .rejected(let address, let time):
            var count = 1
            if case .failing(let earlier, let lastAt)? = addresses[address], time - lastAt < Self.quietInterval {
                count = earlier + 1
            }
            if addresses[address] == nil, addresses.count >= Self.addressLimit { forgetQuietest() }
            addresses[address] = .failing(count: count, lastAt: time)
            return count < 2 ? .answerNow : .answerAfter(seconds: Self.delay(afterWrongTries: count))
        }
    }

    /// The wait before answering the `count`th wrong try in a row (from the second on).
    static func delay(afterWrongTries count: Int) -> Double {
        min(Self.firstDelay * Double(1 << min(count - 2, 16)), Self.longestDelay)
    }

    private mutating func forgetQuietest() {
        guard let quietest = addresses.min(by: { Self.lastAt($0.value) < Self.lastAt($1.value) }) else { return }
        addresses[quietest.key] = nil
    }

    private static func lastAt(_ state: AddressState) -> Double {
        switch state {
        case .failing(_, let lastAt): lastAt
        }
    }

    /// The addresses remembered (for tests of the bound).
    public var rememberedCount: Int { addresses.count }
}
