import Foundation

/// The date spellings used in reports and snippets, always in UTC.
enum DateText {
    /// `2026-03-01`.
    static func day(_ date: Date) -> String { formatter("yyyy-MM-dd").string(from: date) }

    /// `2026-03-01 12:00 UTC`.
    static func minute(_ date: Date) -> String { formatter("yyyy-MM-dd HH:mm").string(from: date) + " UTC" }

    /// The start (UTC) of a `yyyy-MM-dd` day, or nil when `text` is not one.
    static func parseDay(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.count == 10, let date = formatter("yyyy-MM-dd").date(from: trimmed) else { return nil }
        return day(date) == trimmed ? date : nil
    }

    /// `87 days left`, `less than a day left`, `EXPIRED`.
    static func daysLeft(_ days: Int) -> String {
        switch days {
        case 1...: return days == 1 ? "1 day left" : "\(days) days left"
        case 0: return "less than a day left"
        default: return "EXPIRED"
        }
    }

    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = format
        return formatter
    }
}
