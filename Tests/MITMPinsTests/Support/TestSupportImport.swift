/// The shared test support (Subprocess, ChildProcess, TestPKI, TemporaryDirectory), visible in every file of this
/// target without an import of its own.
@_exported import TestSupport
