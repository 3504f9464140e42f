import ArgumentParser
import MITMCore
import MITMTLS

/// `mitm-proxy audit`: runs a client command once per certificate profile and concludes, per host, whether the client
/// validates certificates and whether it pins.
struct AuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract:
            "Run a client command once per certificate profile: does it validate certificates at all, and does it pin?",
        discussion: """
            Example:
              mitm-proxy audit --expect validates:api.example.com --report audit.json --junit audit.xml -- ./run-app-tests.sh
            Each round starts the proxy on a free port showing every host one profile, runs the command with the client-mode \
            environment (HTTPS_PROXY, SSL_CERT_FILE, ...), and records the verdicts. Then it prints the host x profile matrix and \
            a conclusion per host: CRITICAL (accepted an invalid certificate), VALIDATES-NOT-PINNED, PINNED, or PROVES-NOTHING and why. \
            Exit 0 when no invalid certificate was accepted and every --expect holds (validates:HOST, pinned:HOST, and \
            refused:/intercepted: checked against the trusted round), 1 otherwise, 2 on a usage or setup error. A failing client \
            command is expected in some rounds (that is how refusals look) and does not change the exit code.
            """
    )

    @OptionGroup var proxy: ProxyOptions

    @Option(
        name: .customLong("profiles"),
        help: ArgumentHelp(
            "Comma-separated profiles, one round each, in order (default: every profile except key:FILE).",
            valueName: "a,b,c"))
    var profiles: String?

    @Argument(
        parsing: .postTerminator,
        help: ArgumentHelp("The client command to run once per profile (after --).", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else {
            throw ValidationError(
                "give the client command after --, e.g. mitm-proxy audit -- curl https://example.com/")
        }
        guard proxy.attack.isEmpty else {
            throw ValidationError("audit chooses the certificate of each round: use --profiles, not --attack")
        }
        guard proxy.port == nil else {
            throw ValidationError("audit runs each round on a free port: --port does not apply")
        }
        guard proxy.harPath == nil, proxy.eventsPath == nil else {
            throw ValidationError("--har and --events do not apply to audit; use --report")
        }
        let parsed = try parsedProfiles()
        guard !parsed.isEmpty else { throw ValidationError("--profiles is empty") }
        for case .key(let path) in parsed {
            do { _ = try CertificateProfileForger.readKey(path) } catch {
                throw ValidationError("--profiles \(error.description)")
            }
        }
    }

    /// `--profiles`, parsed (the default list without it).
    func parsedProfiles() throws -> [CertificateProfile] {
        guard let profiles else { return CertificateProfile.plain }
        var parsed: [CertificateProfile] = []
        for text in profiles.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !text.isEmpty
        {
            do throws(CertificateProfileError) {
                let profile = try CertificateProfile(parsing: text)
                if !parsed.contains(profile) { parsed.append(profile) }
            } catch {
                throw ValidationError("--profiles: \(error.description)")
            }
        }
        return parsed
    }

    func run() throws {
        let status = try AuditRunner(options: proxy, profiles: try parsedProfiles(), command: command).run()
        if status != 0 { throw ExitCode(status) }
    }
}
