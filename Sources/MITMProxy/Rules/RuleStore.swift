import Dispatch
import Foundation
import MITMCore
import MITMRules
import Synchronization

/// The rules in force: the command line's, then the rules file's, which is read again when it changes
/// (checked once a second by its size, modification time and inode, so an editor's save-by-rename is
/// seen too). A file that no longer reads keeps the previous rules in force, and says why.
final class RuleStore: Sendable {
    private let flagRules: [TrafficRule]
    private let path: String?
    /// No rule is in force: requests skip the lock.
    private let empty: Atomic<Bool>
    private let book: Mutex<RuleBook>
    /// The rules file's rules as last read, and the breakpoints set from the web UI (after every other rule).
    private let fileRules = Mutex<[TrafficRule]>([])
    private let webRules = Mutex<[TrafficRule]>([])
    private let tallies = Mutex<[String: RuleTally]>([:])
    private let order = Mutex<[String]>([])
    private let stamp = Mutex<FileStamp?>(nil)
    private let queue = DispatchQueue(label: "mitm-proxy.rules-file")
    /// Touched only on `queue`.
    private nonisolated(unsafe) var watcher: DispatchSourceTimer?
    /// Receives what became of a reload (applied, or refused and why).
    private let onReload: Mutex<(@Sendable (String, [String]) -> Void)?> = Mutex(nil)

    /// The flag rules, then the file's; fails when the file cannot be read at start.
    init(flagRules: [TrafficRule], file: String?) throws(ProxyStartError) {
        self.flagRules = flagRules
        path = file
        var rules = flagRules
        if let file {
            do {
                let read = try RulesFileReader.rules(at: file)
                fileRules.withLock { $0 = read }
                rules += read
            } catch {
                throw ProxyStartError.rulesFile(reason: error.message)
            }
            stamp.withLock { $0 = FileStamp(path: file) }
        }
        book = Mutex(RuleBook(rules))
        empty = Atomic(rules.isEmpty)
    }

    /// The rules as of now.
    var current: RuleBook { empty.load(ordering: .relaxed) ? RuleBook() : book.withLock { $0 } }

    /// Sets the web UI's breakpoint rules (replacing the ones it set before).
    func setWebRules(_ rules: [TrafficRule]) {
        webRules.withLock { $0 = rules }
        rebuild()
    }

    /// The web UI's breakpoint rules.
    var webRuleList: [TrafficRule] { webRules.withLock { $0 } }

    private func rebuild() {
        let rules = flagRules + fileRules.withLock { $0 } + webRules.withLock { $0 }
        book.withLock { $0 = RuleBook(rules) }
        empty.store(rules.isEmpty, ordering: .relaxed)
    }

    /// Starts watching the rules file (if any); `report` hears of every reload, with the rule names now in force.
    func watch(report: @escaping @Sendable (String, [String]) -> Void) {
        guard let path else { return }
        onReload.withLock { $0 = report }
        queue.sync {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + 1, repeating: 1, leeway: .milliseconds(100))
            timer.setEventHandler { [weak self] in self?.checkFile(path) }
            timer.activate()
            watcher = timer
        }
    }

    /// Stops watching.
    func stop() {
        queue.sync {
            watcher?.cancel()
            watcher = nil
        }
    }

    /// Reads the file again if it changed since the last look.
    func checkFile(_ path: String) {
        let now = FileStamp(path: path)
        let changed = stamp.withLock { previous -> Bool in
            defer { previous = now }
            return previous != now
        }
        guard changed else { return }
        let report = onReload.withLock { $0 }
        do {
            let read = try RulesFileReader.rules(at: path)
            fileRules.withLock { $0 = read }
            rebuild()
            let rules = flagRules + read
            report?("reloaded \(path): \(rules.count) rule\(rules.count == 1 ? "" : "s") in force", rules.map(\.name))
        } catch {
            let count = current.rules.count
            report?("\(error.message); keeping the previous \(count) rule\(count == 1 ? "" : "s")", [])
        }
    }

    /// Counts a firing for the report.
    func tally(_ firing: RuleFiring) {
        for rule in firing.rules {
            let isNew = tallies.withLock { tallies -> Bool in
                let known = tallies[rule] != nil
                tallies[rule, default: RuleTally(rule: rule, fired: 0, lastAction: "")].fired += 1
                tallies[rule]?.lastAction = firing.action
                return !known
            }
            if isNew { order.withLock { $0.append(rule) } }
        }
    }

    /// Every rule that acted, in the order they first did.
    var tallied: [RuleTally] {
        let names = order.withLock { $0 }
        return tallies.withLock { tallies in names.compactMap { tallies[$0] } }
    }
}

/// What tells a changed file: its size, modification time and inode (nil when it is missing).
struct FileStamp: Equatable, Sendable {
    let size: Int64
    let modified: Int
    let modifiedNanoseconds: Int
    let inode: UInt64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        size = Int64(info.st_size)
        modified = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
        inode = UInt64(info.st_ino)
    }
}
