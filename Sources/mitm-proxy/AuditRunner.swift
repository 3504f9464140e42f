import Foundation
import MITMCore
@_spi(CommandLine) import MITMProxy
@_spi(CommandLine) import MITMRecording
import MITMTLS
import Synchronization

/// Runs the audit's rounds, one proxy per profile on a free port, then prints and writes the result.
struct AuditRunner {
    let options: ProxyOptions
    let profiles: [CertificateProfile]
    let command: [String]

    func run() throws -> Int32 {
        let console = ConsoleWriter()
        let expectations = try options.parsedExpectations().expectations
        let started = ContinuousClock.now
        var rounds: [AuditRound] = []
        for (index, profile) in profiles.enumerated() {
            console.err(
                "audit round \(index + 1)/\(profiles.count): \(profile)\(profile.defect.map { " (\($0))" } ?? "")")
            switch runRound(profile, console: console) {
            case .success(let round): rounds.append(round)
            case .failure(let message):
                console.err("mitm-proxy: \(message)")
                return ExitStatus.usageOrSetup
            }
        }
        let audit = AuditResult(
            rounds: rounds, expectations: expectations, allowUnprovenRefusals: options.allowUnprovenRefusals)
        let summary = AuditText.matrix(audit)
        console.err(summary)
        let took = ContinuousClock.now - started
        do {
            if let path = options.reportPath {
                try audit.encoded().write(to: URL(fileURLWithPath: path), options: .atomic)
            }
            if let path = options.junitPath {
                try Data(
                    JUnitReport(
                        audit: audit,
                        seconds: took.inSeconds,
                        summary: summary
                    ).xml.utf8
                ).write(to: URL(fileURLWithPath: path), options: .atomic)
            }
        } catch {
            console.err("mitm-proxy: cannot write the audit's report: \(error.localizedDescription)")
            return ExitStatus.usageOrSetup
        }
        return audit.result == "pass" ? ExitStatus.success : ExitStatus.expectationsFailed
    }

    private struct RoundFailure: Error {
        let message: String
    }

    /// One round: a proxy showing `profile` to every host, the command through it, the verdicts settled.
    private func runRound(_ profile: CertificateProfile, console: ConsoleWriter) -> Result<AuditRound, RoundFailure> {
        let server: ProxyServer
        do {
            var configuration = try options.makeConfiguration(runsClient: true)
            configuration.tunnelPolicy.profileRules = [CertificateProfileRule(pattern: .everyHost, profile: profile)]
            server = try ProxyServer(configuration: configuration)
        } catch {
            return .failure(RoundFailure(message: "\(error)"))
        }
        let passedThrough = Mutex<[String]>([])
        let log = ConsoleLog(verbosity: options.verbosity)
        server.subscribe(takesRequestEvents: false) { event in
            if let line = log.line(for: event) { console.err("  \(line)") }
            if case .tunnel(_, let host, _, let bytesUp, let bytesDown, _, _, _) = event, bytesUp > 0, bytesDown > 0 {
                passedThrough.withLock { if !$0.contains(host) { $0.append(host) } }
            }
        }
        server.start()
        let outcome: ClientCommandOutcome
        do {
            outcome = try ClientCommand(arguments: command, proxy: server.clientEnvironment).runToCompletion()
        } catch {
            server.stop()
            return .failure(RoundFailure(message: "\(error)"))
        }
        _ = waitBlocking { await server.settleVerdicts() }
        server.stop()
        server.flushEvents()
        let ledger = server.ledger
        return .success(
            AuditRound(
                profile: profile, hosts: ledger.hostVerdicts, passedThrough: passedThrough.withLock { $0 },
                provenClients: ledger.provenClients, clientCommand: outcome))
    }
}
