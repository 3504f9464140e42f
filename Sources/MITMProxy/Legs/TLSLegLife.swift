import MITMCore
import MITMTLS

/// How a TLS handshake on a leg ended.
enum TLSHandshakeOutcome: Equatable {
    /// The handshake completed.
    case complete
    /// OpenSSL failed the handshake (an alert received or sent, a verification error, garbage).
    case failed(TLSFailure)
    /// The peer closed (FIN) or reset the connection before the handshake completed, without an alert.
    case peerClosed(reset: Bool)
}

/// The life of a TLS leg: handshaking, open (before and after its first plaintext), input ended. Events in, actions
/// out; `TLSLeg` performs them, calling its owner's hooks (the handshake's end, the first plaintext, how input ended
/// before any) at most once each.
struct TLSLegLife: Equatable {
    enum State: Equatable {
        case handshaking
        /// The handshake failed or the peer left during it: nothing more is reported.
        case handshakeFailed
        /// The handshake completed; no plaintext has arrived yet.
        case awaitingFirstData
        /// Plaintext flows.
        case open
        /// The peer ended its side (FIN, close_notify), reset it, or broke TLS: nothing more is read.
        case inputEnded
    }

    /// How the peer's input ended.
    enum InputEnding: Equatable {
        /// FIN.
        case finished
        /// A reset, or another socket error.
        case reset
        /// close_notify.
        case closeNotify
        /// TLS failed after the handshake (a fatal alert received, or garbage).
        case failed(alert: TLSAlert?)
    }

    enum Event: Equatable {
        case handshakeStepped(TLSHandshakeStep)
        case plaintext
        case inputEnded(InputEnding)
    }

    /// An event the leg's states cannot take.
    enum ImpossibleEvent: String, Equatable {
        case plaintextOutsideTheOpenLeg = "plaintext was read from a TLS leg that was not open"
        case handshakeStepAfterTheHandshake = "the TLS handshake was stepped after it ended"
        case alertDuringTheHandshake = "a post-handshake TLS ending was read during the handshake"
    }

    enum Action: Equatable {
        case none
        /// Tell the owner how the handshake ended (and then, when complete, read plaintext).
        case reportHandshake(TLSHandshakeOutcome)
        /// Tell the owner the first plaintext arrived, then deliver it.
        case reportFirstData
        /// Deliver the plaintext.
        case deliver
        /// Tell the owner how input ended before any plaintext, then the leg's listener.
        case reportInputEnd(alert: TLSAlert?, reset: Bool)
        /// Tell the leg's listener that input ended.
        case passInputEnd
        case impossible(ImpossibleEvent)
    }

    private(set) var state = State.handshaking

    mutating func receive(_ event: Event) -> Action {
        switch event {
        case .handshakeStepped(let step):
            guard state == .handshaking else { return .impossible(.handshakeStepAfterTheHandshake) }
            switch step {
            case .needsInput: return .none
            case .complete:
                state = .awaitingFirstData
                return .reportHandshake(.complete)
            case .failed(let failure):
                state = .handshakeFailed
                return .reportHandshake(.failed(failure))
            }
        case .plaintext:
            switch state {
            case .awaitingFirstData:
                state = .open
                return .reportFirstData
            case .open: return .deliver
            case .handshaking, .handshakeFailed, .inputEnded: return .impossible(.plaintextOutsideTheOpenLeg)
            }
        case .inputEnded(let ending):
            return inputEnded(ending)
        }
    }

    private mutating func inputEnded(_ ending: InputEnding) -> Action {
        switch state {
        case .handshaking:
            state = .handshakeFailed
            switch ending {
            case .finished: return .reportHandshake(.peerClosed(reset: false))
            case .reset: return .reportHandshake(.peerClosed(reset: true))
            case .closeNotify, .failed: return .impossible(.alertDuringTheHandshake)
            }
        case .handshakeFailed:
            return .none
        case .awaitingFirstData:
            state = .inputEnded
            switch ending {
            case .finished: return .reportInputEnd(alert: nil, reset: false)
            case .reset: return .reportInputEnd(alert: nil, reset: true)
            case .closeNotify: return .reportInputEnd(alert: .closeNotify, reset: false)
            case .failed(let alert): return .reportInputEnd(alert: alert, reset: false)
            }
        case .open:
            state = .inputEnded
            return .passInputEnd
        case .inputEnded:
            // A reset after the peer's FIN still tells the listener the connection broke; a second FIN tells nothing.
            return ending == .reset ? .passInputEnd : .none
        }
    }

    var isHandshaking: Bool { state == .handshaking }
    /// Whether plaintext may still be read.
    var readsPlaintext: Bool { state == .awaitingFirstData || state == .open }
}
