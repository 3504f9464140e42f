import Foundation
import MITMCore

/// libFuzzer entry: decoding a `--report` file as `verify` does, then everything `verify` computes from it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let report = try? VerdictReport.decode(Data(bytes: data, count: size)) else { return 0 }
    let expectations = report.expectations.compactMap { try? Expectation(parsing: $0.expectation) }
    let check = ExpectationCheck(expectations, provenClients: report.provenClients, allowUnprovenRefusals: report.allowUnprovenRefusals)
    let results = check.evaluate(report.seenHosts)
    _ = VerdictText.table(report.seenHosts, expectations: results, client: report.clientCommand)
    return 0
}
