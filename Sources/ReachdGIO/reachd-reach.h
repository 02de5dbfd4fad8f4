/* can_reach from the daemon's per-destination lookup (`{"op":"reach"}`),
 * which routes as the app's own uid would, after a `get` whose status says
 * the daemon serves the app's network.
 *
 * A query is a client of its own, on a connection of its own, apart from
 * the monitor's subscription: can_reach comes from any thread, and the
 * subscription is read on the monitor's main context alone. It asks the
 * daemons of the monitor's paths (reachd-daemon-socket.h), where one found
 * to serve another network namespace is marked, for the subscription too;
 * of the monitor itself it needs only the host's state. While GLib's
 * backend answers for the daemon (reachd-fallback.c), the monitor asks that
 * instead. */
#pragma once

/* Of the monitor it needs only GIO's interface (network-available, read
 * through the property, which the monitor reads atomically): no cycle
 * with reachd-network-monitor.c, which calls it. */
#include "reachd-daemon-socket.h"

G_BEGIN_DECLS

/* GNetworkMonitor's can_reach, asked of a daemon of `paths`, the monitor's
 * (the query holds the monitor, and so them). From any thread. */
gboolean reachd_reach_sync (GNetworkMonitor *self, ReachdDaemonPaths *paths, GSocketConnectable *connectable,
                            GCancellable *cancellable, GError **error);

/* can_reach_async's: returns a boolean on `task` (its source object the
 * monitor, `paths`' owner; its cancellable the call's), from the task's
 * main context. Takes `task`, and sets its task data. */
void reachd_reach_async (GTask *task, ReachdDaemonPaths *paths, GSocketConnectable *connectable);

G_END_DECLS
