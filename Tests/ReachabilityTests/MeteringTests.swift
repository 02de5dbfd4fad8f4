import Testing
import TestSupport
@testable import Reachability

@Suite("Metered links")
struct MeteringTests {
    @Test(arguments: [
        (UInt32(512), nil, nil, nil, Metering.guessed),        // PPP
        (1, "wwan", nil, nil, .guessed),                        // a WWAN link made through rtnetlink
        (65534, nil, "wwan", "qmi_wwan", .guessed),             // a raw-IP cellular modem
        (1, nil, nil, "rndis_host", .guessed),                  // Android USB tethering
        (1, nil, nil, "ipheth", .guessed),                      // iPhone USB tethering
        (1, nil, nil, "e1000e", .no),                           // wired Ethernet
        (1, "veth", nil, nil, .no),
        (1, nil, "wlan", "iwlwifi", .no),                       // Wi-Fi: unknown, so not guessed
    ] as [(UInt32, String?, String?, String?, Metering)])
    func theGuessFollowsTheLinksKind(hardwareType: UInt32, kind: String?, deviceType: String?, driver: String?, expected: Metering) {
        #expect(MeteringGuess.guess(hardwareType: hardwareType, kind: kind, deviceType: deviceType, driver: driver) == expected)
    }

    @Test func thePrimaryPathsInterfaceDecidesWhetherTheStatusIsMetered() {
        let path = NetworkPath(interface: "wwan0", index: 3, family: .ipv4, gateway: nil)
        func status(_ metering: Metering) -> NetworkStatus {
            NetworkStatus.built(
                ipv4: .through(path),
                interfaces: [
                    InterfaceStatus(name: "eth0", index: 2, up: true, carrier: false, operstate: "down", loopback: false, addresses: []),
                    InterfaceStatus(name: "wwan0", index: 3, up: true, carrier: true, operstate: "up", loopback: false,
                                    addresses: [], metered: metering),
                ],
                changedAt: .now)
        }
        #expect(status(.guessed).metered && status(.yes).metered)
        #expect(!status(.no).metered)
        let line = DaemonMessage.status(status(.guessed)).line()
        #expect(String(decoding: line, as: UTF8.self).contains(#""metered":true"#))
        #expect(String(decoding: line, as: UTF8.self).contains(#""metered":"guessed""#))
    }
}
