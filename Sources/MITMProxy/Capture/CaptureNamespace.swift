import Foundation
import MITMCore

#if canImport(Glibc)
import Glibc
#endif

/// The network namespace a captured client command runs in (`--capture`): the steps of `CaptureMachine` that are the
/// system's (the namespace, its link, addresses, route, resolv.conf and nftables table), done and taken down with `ip`,
/// `nft` and files as `CapturePlan` says. Taking a step down is idempotent and harmless when it was never done.
public final class CaptureNamespace: Sendable {
    public let plan: CapturePlan
    private let ip: String
    private let nft: String

    /// Why this process cannot make a capture namespace (not root, no CAP_NET_ADMIN and CAP_SYS_ADMIN, a tool missing),
    /// with what to do instead; nil when it can.
    public static func problem() -> String? {
        if !hasPrivileges() {
            return
                "--capture needs root (or the CAP_NET_ADMIN and CAP_SYS_ADMIN capabilities) to make a network namespace, a "
                + "veth pair and nftables rules, and this process has neither: run it with sudo, or leave out --capture and "
                + "run the client through the explicit proxy (mitm-proxy ... -- COMMAND sets HTTPS_PROXY for clients that honour it)"
        }
        for tool in ["ip", "nft"] where SystemCommand.tool(tool) == nil {
            let package = tool == "ip" ? "iproute2" : "nftables"
            return
                "--capture needs the `\(tool)` tool, which is not installed: install \(package) (apt-get install \(package))"
        }
        return nil
    }

    /// Root, or both capabilities in the effective set (bits 12 and 21 of `CapEff`).
    private static func hasPrivileges() -> Bool {
        if geteuid() == 0 { return true }
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
            let mask = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << 12) != 0 && mask & (1 << 21) != 0
    }

    private init(plan: CapturePlan, ip: String, nft: String) {
        self.plan = plan
        self.ip = ip
        self.nft = nft
    }

    /// Removes what crashed runs left (their pid is no running mitm-proxy); returns the namespaces it removed.
    public static func removeLeftovers() -> [String] {
        guard let ip = SystemCommand.tool("ip"), let nft = SystemCommand.tool("nft") else { return [] }
        let resolvers = (try? FileManager.default.contentsOfDirectory(atPath: "/etc/netns")) ?? []
        let plans = CapturePlan.leftovers(
            namespaces: SystemCommand.run(ip, ["netns", "list"]).output,
            links: SystemCommand.run(ip, ["-o", "link", "show"]).output,
            tables: SystemCommand.run(nft, ["list", "tables"]).output,
            resolverDirectories: resolvers, isRunning: isRunningProxy)
        for plan in plans {
            let leftover = CaptureNamespace(plan: plan, ip: ip, nft: nft)
            for step in CaptureMachine.Step.allCases.reversed() { leftover.undo(step) }
        }
        return plans.map(\.namespace)
    }

    /// Whether `pid` is a running mitm-proxy (a pid of a crashed run given to another program counts as not).
    private static func isRunningProxy(_ pid: Int32) -> Bool {
        guard pid != getpid() else { return true }
        guard let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return false }
        return name.hasPrefix("mitm-proxy") || name.hasPrefix("mitm_proxy")
    }

    /// The namespace of this process, not made yet (`perform` makes it step by step).
    public static func forThisProcess() throws(CaptureError) -> CaptureNamespace {
        if let problem = problem() { throw CaptureError(message: problem) }
        guard let ip = SystemCommand.tool("ip"), let nft = SystemCommand.tool("nft") else {
            throw CaptureError(message: "ip or nft missing")
        }
        return CaptureNamespace(plan: CapturePlan(pid: getpid()), ip: ip, nft: nft)
    }

    /// Does one of the system's steps (`namespace`, `link`, `addresses`, `routes`, `resolver`); says why it could not.
    public func perform(_ step: CaptureMachine.Step) throws(CaptureError) {
        if step == .resolver {
            do {
                try FileManager.default.createDirectory(
                    atPath: plan.resolverDirectory, withIntermediateDirectories: true)
                try Data(plan.resolvConf.utf8).write(to: URL(fileURLWithPath: plan.resolverDirectory + "/resolv.conf"))
            } catch {
                throw CaptureError(
                    message: "cannot write \(plan.resolverDirectory)/resolv.conf: \(error.localizedDescription)")
            }
            return
        }
        let commands = plan.ipCommands(for: step)
        guard !commands.isEmpty else {
            throw CaptureError(message: "capture: \(step) is not a step of the namespace's own")
        }
        for arguments in commands {
            let result = SystemCommand.run(ip, arguments)
            guard result.succeeded else {
                throw CaptureError(
                    message:
                        "cannot set up \(step) of the capture: ip \(arguments.joined(separator: " ")): \(result.output)"
                )
            }
        }
    }

    /// Sends the namespace's TCP to `transparentPort` and its DNS to `dnsPort`, and refuses its other traffic (the
    /// `rules` step).
    public func redirect(transparentPort: Int, dnsPort: Int) throws(CaptureError) {
        let result = SystemCommand.run(
            nft, ["-f", "-"], input: plan.ruleset(transparentPort: transparentPort, dnsPort: dnsPort))
        guard result.succeeded else {
            throw CaptureError(message: "cannot add the nftables redirect (table inet \(plan.table)): \(result.output)")
        }
    }

    /// Runs a command inside the namespace: `ip netns exec NAME` in front of it (it also mounts the namespace's resolv.conf).
    public var commandPrefix: [String] { [ip, "netns", "exec", plan.namespace] }

    /// Takes `step` down; for `command`, ends whatever still runs in the namespace. `listeners` are the proxy server's.
    public func undo(_ step: CaptureMachine.Step) {
        switch step {
        case .command:
            let pids = SystemCommand.run(ip, ["netns", "pids", plan.namespace]).output.split(separator: "\n").compactMap
            { Int32($0) }
            for pid in pids where pid != getpid() { kill(pid, SIGKILL) }
        case .rules:
            _ = SystemCommand.run(nft, plan.teardownNFTCommand)
        case .resolver:
            try? FileManager.default.removeItem(atPath: plan.resolverDirectory)
        case .listeners:
            break
        case .namespace, .link, .addresses, .routes:
            for arguments in plan.ipUndoCommands(for: step) { _ = SystemCommand.run(ip, arguments) }
        }
    }
}

/// Why `--capture` cannot run, in words.
public struct CaptureError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
    public init(message: String) { self.message = message }
}
