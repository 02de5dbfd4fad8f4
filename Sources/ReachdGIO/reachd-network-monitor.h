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

void reachd_network_monitor_register (GIOModule *module);

G_END_DECLS
