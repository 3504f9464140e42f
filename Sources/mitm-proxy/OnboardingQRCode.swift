import MITMCore
@_spi(CommandLine) import MITMProxy

/// The QR code of the onboarding URL in the start banner, drawn with libqrencode when it can be loaded.
enum OnboardingQRCode {
    /// The code and a line saying what it opens; without the library, one line saying how to get it.
    static func lines(for url: String) -> [String] {
        guard let library = QRCodeLibrary.load(), let modules = library.modules(for: url) else {
            return ["(a QR code of \(url) shows here when libqrencode can be loaded: \(QRCodeLibrary.installHint))"]
        }
        return QRCodeText.lines(modules: modules) + ["Scan it with the phone's camera to open \(url)"]
    }
}
