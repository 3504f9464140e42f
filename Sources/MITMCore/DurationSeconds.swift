extension Duration {
    /// The duration in seconds, where arithmetic or text is in seconds (the verdict report, the spare-connection judge).
    package var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
