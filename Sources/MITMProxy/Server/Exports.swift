// `import MITMProxy` is all a test needs: the verdicts, expectations and their results, events, host patterns and rules
// that `ProxyServer` takes and returns are declared in MITMCore, which is not a product of its own.
// Re-exported rather than aliased type by type: under member import visibility (SE-0444, the upcoming feature
// `MemberImportVisibility`) a client sees no member of an aliased type (`.refused`, `.met`, `Expectation(parsing:)`)
// unless it imports the declaring module itself. swift-nio's NIO re-exports NIOCore the same way.
@_exported import MITMCore
