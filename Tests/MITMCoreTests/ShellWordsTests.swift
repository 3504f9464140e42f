import MITMCore
import Testing

/// The client command as shown and recorded: pasted back into a shell, it gives the same arguments.
@Suite struct ShellWordsTests {
    @Test func argumentsAShellWouldSplitOrExpandAreQuoted() {
        #expect(ShellWords.quoted(["curl", "-sS", "https://a.test/x?y=1"]) == "curl -sS 'https://a.test/x?y=1'")
        #expect(ShellWords.quoted(["sh", "-c", "echo $HOME"]) == "sh -c 'echo $HOME'")
        #expect(ShellWords.quoted(["say", "it's", ""]) == "say 'it'\\''s' ''")
        #expect(ShellWords.quoted(["--header", "X-A: b \"c\""]) == "--header 'X-A: b \"c\"'")
    }
}
