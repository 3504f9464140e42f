import Foundation
import MITMCore
import MITMIO
@_spi(CommandLine) import MITMProxy
import Testing

/// The start banner's part about reaching the proxy: every LAN address with the port to type into a phone, the onboarding
/// URL, who can connect and whether credentials are needed; and its QR code, which a real decoder reads back.
@Suite(.tags(.live), .skippedInFastTier) struct StartBannerTests {
    private let interfaces = [
        InterfaceAddress(interface: "lo", address: "127.0.0.1", isIPv6: false),
        InterfaceAddress(interface: "eth0", address: "192.0.2.2", isIPv6: false),
        InterfaceAddress(interface: "wlan0", address: "192.168.1.23", isIPv6: false),
        InterfaceAddress(interface: "lo", address: "::1", isIPv6: true),
        InterfaceAddress(interface: "wlan0", address: "fd00::2", isIPv6: true),
        InterfaceAddress(interface: "wlan0", address: "fe80::1%wlan0", isIPv6: true),
    ]

    private func banner(
        _ host: String, public allowPublic: Bool = false, user: String? = nil, advertise: String? = nil,
        inContainer: Bool = false
    ) -> ReachabilityBanner {
        ReachabilityBanner(
            listenHost: host, port: 8888, access: ClientAccessPolicy(listenHost: host, allowPublicClients: allowPublic),
            authUser: user, advertised: advertise.map { try! AdvertisedAddress(parsing: $0) }, inContainer: inContainer,
            interfaces: interfaces)
    }

    @Test func everyIPv4AddressIsListedForAllInterfacesPrivateFirst() {
        let lan = banner("0.0.0.0")
        #expect(lan.deviceAddresses.map(\.address) == ["192.168.1.23", "192.0.2.2"])
        #expect(lan.directOnboardingURL == "http://192.168.1.23:8888/")
        #expect(
            lan.deviceLines == [
                "On a phone on the same network, set the Wi-Fi proxy to Manual:",
                "  server 192.168.1.23  port 8888   (wlan0)",
                "  server 192.0.2.2     port 8888   (eth0)",
                "then open http://mitm.proxy/ on it to install the CA (or http://192.168.1.23:8888/ before the proxy is set)",
                "note: 192.0.2.2 is not a private address: devices on that network are refused unless --allow-public-clients",
            ])
        #expect(lan.accessLines[0].hasPrefix("Who can connect: this machine and devices on private networks (10/8"))
        #expect(lan.accessLines[1] == "Proxy authentication: off (--proxy-auth USER:PASSWORD to require it)")
    }

    @Test func aDualStackListenerListsIPv6TooAndOneAddressListsItself() {
        let dual = banner("::", public: true, user: "qa")
        #expect(dual.deviceAddresses.map(\.address) == ["192.168.1.23", "fd00::2", "192.0.2.2"])
        #expect(!dual.deviceLines.contains { $0.hasPrefix("note:") }, "anyone is admitted")
        #expect(
            dual.accessLines == [
                "Who can connect: ANYONE who can reach this machine (--allow-public-clients)",
                "Proxy authentication: required (user qa)",
            ])
        let one = banner("fd00::2")
        #expect(one.deviceAddresses.map(\.address) == ["fd00::2"])
        #expect(one.directOnboardingURL == "http://[fd00::2]:8888/")
    }

    @Test func onLoopbackThereIsNothingToTypeIntoAPhone() {
        let local = banner("127.0.0.1")
        #expect(local.deviceAddresses.isEmpty && local.directOnboardingURL == nil)
        #expect(local.deviceLines == ["Devices behind the proxy can download it from http://mitm.proxy/"])
        #expect(
            local.accessLines == [
                "Who can connect: this machine only (listening on loopback)", "Proxy authentication: off",
            ])
    }

    /// A container's interface addresses are its own (10.88.0.9 behind podman's bridge): the phone needs the host's.
    @Test func aContainerOnEveryInterfacePointsPhonesAtTheHostAndThePublishedPort() {
        let contained = banner("0.0.0.0", inContainer: true)
        #expect(
            contained.pointsToTheContainerHost && contained.directOnboardingURL == nil,
            "no QR code of an unreachable address")
        #expect(
            contained.deviceLines == [
                "Running in a container: its own addresses are not ones a phone can reach.",
                "On a phone on the same network, set the Wi-Fi proxy to Manual: server = the address of the computer running the container, "
                    + "port = the host port published for port 8888 (e.g. -p 8888:8888)",
                "then open http://mitm.proxy/ on it to install the CA; --advertise HOST:PORT prints that address here, with a QR code",
            ])
        #expect(!contained.deviceLines.joined().contains("192.168.1.23"))
        #expect(
            banner("192.168.1.23", inContainer: true).deviceLines[1] == "  server 192.168.1.23  port 8888   (wlan0)",
            "an address given with --host is listed as given")
        #expect(
            banner("127.0.0.1", inContainer: true).deviceLines == [
                "Devices behind the proxy can download it from http://mitm.proxy/"
            ])
    }

    @Test func anAdvertisedAddressIsTheOnlyOneNamedInAndOutOfAContainer() {
        let expected = [
            "On a phone on the same network, set the Wi-Fi proxy to Manual:",
            "  server 192.0.2.7  port 9999   (--advertise)",
            "then open http://mitm.proxy/ on it to install the CA (or http://192.0.2.7:9999/ before the proxy is set)",
        ]
        for contained in [false, true] {
            let advertised = banner("0.0.0.0", advertise: "192.0.2.7:9999", inContainer: contained)
            #expect(advertised.deviceLines == expected && advertised.directOnboardingURL == "http://192.0.2.7:9999/")
            #expect(!advertised.pointsToTheContainerHost)
        }
        #expect(
            banner("127.0.0.1", advertise: "mac.local:8888").deviceLines[1]
                == "  server mac.local  port 8888   (--advertise)",
            "a port forward to a loopback listener")
        #expect(banner("::", advertise: "[fd00::5]:18888").directOnboardingURL == "http://[fd00::5]:18888/")
    }

    @Test func containerSignsAreTheEnginesFilesTheContainerVariableOrAnEngineCgroup() {
        #expect(
            ContainerDetection.signsSayContainer(markerFileExists: true, containerVariable: nil, initCgroups: "0::/\n"))
        #expect(
            ContainerDetection.signsSayContainer(markerFileExists: false, containerVariable: "podman", initCgroups: ""))
        #expect(
            ContainerDetection.signsSayContainer(
                markerFileExists: false, containerVariable: nil,
                initCgroups: "12:memory:/docker/3f2a9c\n0::/\n"))
        #expect(
            ContainerDetection.signsSayContainer(
                markerFileExists: false, containerVariable: nil,
                initCgroups: "1:name=systemd:/kubepods/besteffort/pod1/abc\n"))
        #expect(
            !ContainerDetection.signsSayContainer(
                markerFileExists: false, containerVariable: "", initCgroups: "9:name=systemd:/\n0::/\n"))
        #expect(
            !ContainerDetection.signsSayContainer(
                markerFileExists: false, containerVariable: nil,
                initCgroups: "0::/user.slice/user-1000.slice/session-2.scope\n"))
    }

    @Test func theTerminalQRCodeDrawsExactlyTheModulesWithAQuietZone() {
        let modules: [[Bool]] = [[true, false, true], [false, true, true], [true, true, false]]
        let lines = QRCodeText.lines(modules: modules, border: 1)
        #expect(lines.count == 3, "5 rows with the border, two per line")
        let cells = lines.map {
            Array(
                $0.replacingOccurrences(of: "\u{1B}[30;107m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: ""))
        }
        var drawn: [[Bool]] = []
        for row in cells {
            drawn.append(row.map { $0 == "\u{2588}" || $0 == "\u{2580}" })
            drawn.append(row.map { $0 == "\u{2588}" || $0 == "\u{2584}" })
        }
        let light = [false, false, false, false, false]
        #expect(Array(drawn.prefix(5)) == [light] + modules.map { [false] + $0 + [false] } + [light])
        #expect(drawn[5] == light)
    }

    /// libqrencode (loaded at run time) encodes the onboarding URL; zbarimg reads the code back from a bitmap of the modules.
    @Test(
        .enabled(
            if: QRCodeLibrary.load() != nil, "libqrencode is not installed (scripts/install-deps installs libqrencode4)"
        ))
    func theOnboardingURLsQRCodeDecodesBackToTheURL() async throws {
        let url = "http://192.168.1.23:8888/"
        let modules = try #require(QRCodeLibrary.load()?.modules(for: url))
        #expect(modules.count >= 21 && modules.allSatisfy { $0.count == modules.count })
        let path = TemporaryDirectory.path("qr") + ".pbm"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.bitmap(modules, scale: 4, border: 4).write(toFile: path, atomically: true, encoding: .ascii)
        let decoded = try await Subprocess.run("zbarimg", ["--raw", "-q", path])
        #expect(decoded.stdoutText.trimmingCharacters(in: .newlines) == url, "\(decoded)")
    }

    /// A plain PBM (P1) image of `modules`, each `scale` pixels wide, inside a light border.
    private static func bitmap(_ modules: [[Bool]], scale: Int, border: Int) -> String {
        let side = (modules.count + 2 * border) * scale
        var rows: [String] = ["P1", "\(side) \(side)"]
        for y in 0..<side {
            let moduleRow = y / scale - border
            rows.append(
                (0..<side).map { x in
                    let moduleColumn = x / scale - border
                    let dark =
                        modules.indices.contains(moduleRow) && modules.indices.contains(moduleColumn)
                        && modules[moduleRow][moduleColumn]
                    return dark ? "1" : "0"
                }.joined(separator: " "))
        }
        return rows.joined(separator: "\n") + "\n"
    }
}
