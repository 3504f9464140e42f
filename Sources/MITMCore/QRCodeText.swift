/// A QR code drawn in a terminal: two module rows per text line with half-block characters, black on bright white
/// set explicitly (ANSI colours), so a phone camera reads it on a dark and on a light terminal alike.
package enum QRCodeText {
    /// The lines for `modules` (`true` = dark, rows of equal length) inside a light quiet zone `border` modules wide.
    package static func lines(modules: [[Bool]], border: Int = 2) -> [String] {
        let width = (modules.first?.count ?? 0) + 2 * border
        let light = [Bool](repeating: false, count: width)
        let padding = [Bool](repeating: false, count: border)
        var rows =
            [[Bool]](repeating: light, count: border) + modules.map { padding + $0 + padding }
            + [[Bool]](repeating: light, count: border)
        if rows.count % 2 == 1 { rows.append(light) }
        return stride(from: 0, to: rows.count, by: 2).map { index in
            let cells = zip(rows[index], rows[index + 1]).map { top, bottom in
                switch (top, bottom) {
                case (true, true): "\u{2588}"
                case (true, false): "\u{2580}"
                case (false, true): "\u{2584}"
                case (false, false): " "
                }
            }
            return blackOnWhite + cells.joined() + reset
        }
    }

    static let blackOnWhite = "\u{1B}[30;107m"
    static let reset = "\u{1B}[0m"
}
