@testable import MITMCore

/// libFuzzer entry: the capture's DNS responder on one UDP datagram (`DNSQuery`), then the fake address it would hand
/// out. Oracles: an answer echoes the id and the question, and is exactly as long as its records; a problem is answered
/// with a bare header or not at all; a host name read from the question is in normal form, spells the question's
/// labels, and its fake address leads back to it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let datagram = Array(UnsafeBufferPointer(start: data, count: size))
    let query: DNSQuery
    do {
        query = try DNSQuery.parse(datagram)
    } catch {
        let answer = DNSQuery.answer(to: error)
        if case .unanswerable = error {
            precondition(answer == nil, "an unanswerable datagram was answered")
        } else {
            precondition(answer?.count == 12 && answer?[0] == datagram[0] && answer?[1] == datagram[1], "bad problem answer \(answer ?? [])")
        }
        return 0
    }
    let question = Array(query.question)
    precondition(question == Array(datagram[12..<12 + question.count]), "the question is not the datagram's")
    let empty = query.answer(address: nil)
    precondition(empty.count == 12 + question.count && Array(empty[12...]) == question, "the empty answer does not echo the question")
    let full = query.answer(address: [198, 18, 0, 1])
    precondition(full.count == empty.count + 16 && Array(full[..<2]) == Array(datagram[..<2]) && full[2] & 0x80 != 0,
                 "the answer's header or length is wrong")
    guard let name = query.hostName else { return 0 }
    precondition(HostName.validate(name) == name, "the host name \(name) is not in normal form")
    var spelled: [UInt8] = []
    for label in name.split(separator: ".", omittingEmptySubsequences: false) { spelled += [UInt8(label.utf8.count)] + Array(label.utf8) }
    let asked = question.dropLast(4).dropLast().map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    precondition(spelled == Array(asked), "the host name \(name) does not spell the question's labels")
    var pool = FakeAddressPool(capacity: 2)
    let address = pool.address(for: name).map(String.init).joined(separator: ".")
    precondition(pool.name(for: address) == name, "the fake address \(address) does not lead back to \(name)")
    return 0
}
