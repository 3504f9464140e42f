import MITMCore

/// libFuzzer entry: the SOCKS5 handshake on a client's raw bytes, whole and split at points the input chooses, with
/// and without authentication. Oracle: both ways end in the same actions and the same state.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let requiresCredentials = first & 1 == 1
    let input = Array(bytes.dropFirst())
    func run(_ pieces: [ArraySlice<UInt8>]) -> ([SOCKS5Handshake.Action], SOCKS5Handshake.State) {
        var handshake = SOCKS5Handshake(requiresCredentials: requiresCredentials)
        var actions: [SOCKS5Handshake.Action] = []
        for piece in pieces {
            actions += handshake.receive(Array(piece))
            if case .checkCredentials(let user, _)? = actions.last { actions += handshake.credentialsChecked(user.count % 2 == 0) }
        }
        return (actions, handshake.state)
    }
    let whole = run([input[...]])
    var pieces: [ArraySlice<UInt8>] = []
    var start = 0
    while start < input.count {
        let length = 1 + Int(input[start]) % 7
        pieces.append(input[start..<min(input.count, start + length)])
        start += length
    }
    let split = run(pieces)
    precondition(whole.0 == split.0 && whole.1 == split.1, "split input changed the handshake: \(whole) vs \(split)")
    return 0
}
