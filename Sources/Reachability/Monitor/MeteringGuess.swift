/// Guesses whether a link is metered from what the kernel and sysfs say of it,
/// as NetworkManager guesses for modems and tethering. Pure.
enum MeteringGuess {
    /// ARPHRD_PPP: dial-up and most cellular data sessions.
    static let pointToPoint: UInt32 = 512
    /// Drivers of cellular modems and of phones sharing their connection.
    static let meteredDrivers: Set<String> = [
        "qmi_wwan", "cdc_mbim", "option", "sierra_net", "huawei_cdc_ncm",  // cellular modems
        "rndis_host", "ipheth",                                            // Android and iPhone USB tethering
    ]

    static func guess(hardwareType: UInt32, kind: String?, deviceType: String?, driver: String?) -> Metering {
        if hardwareType == pointToPoint || kind == "ppp" || kind == "wwan" || deviceType == "wwan" { return .guessed }
        if let driver, meteredDrivers.contains(driver) { return .guessed }
        return .no
    }
}
