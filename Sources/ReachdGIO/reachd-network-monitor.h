/* GNetworkMonitor answered by reachd: the `reachd` implementation of GIO's
 * gio-network-monitor extension point. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define REACHD_TYPE_NETWORK_MONITOR (reachd_network_monitor_get_type ())
G_DECLARE_FINAL_TYPE (ReachdNetworkMonitor, reachd_network_monitor, REACHD, NETWORK_MONITOR, GObject)

/* Above NetworkManager's backend (30) and netlink's (20), below the portal's
 * (40): sandboxed apps keep asking the portal, which asks the host's GLib,
 * which asks reachd. */
#define REACHD_NETWORK_MONITOR_PRIORITY 35

/* The client's rules for a daemon that is away, as Tests/ClientSpec/
 * constants.json states them for this module and the Swift client alike
 * (a test reads both). The first retry after REACHD_RETRY_FIRST_MS, not at
 * once: under reachd.socket the connection itself restarts the daemon. The
 * waits double up to REACHD_RETRY_MAX_MS. A subscription that lasted
 * REACHD_STABLE_MS after its first status was a daemon that worked: its end
 * (a restart) is retried after the shortest wait. One that ended sooner, or
 * never answered, backs off, so a daemon that answers and hangs up can't
 * spin the app's loop. */
#define REACHD_RETRY_FIRST_MS 100
#define REACHD_RETRY_MAX_MS 5000
#define REACHD_STABLE_MS 1000

void reachd_network_monitor_register (GIOModule *module);

G_END_DECLS
