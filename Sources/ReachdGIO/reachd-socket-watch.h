/* Where the daemons' sockets would appear, watched while nothing listens at
 * any: a GLib app that followed a daemon waits for its return with no
 * timer. */
#pragma once

#include <gio/gio.h>

#include "reachd-daemon-socket.h"

G_BEGIN_DECLS

typedef struct _ReachdSocketWatch ReachdSocketWatch;

/* Watches, on `context`, the directory of each path in `paths` not found to
 * serve another network (or, where it does not exist yet, the nearest one
 * that does, for the next name down the path), and calls `changed` with
 * `data` once something is made or renamed there under such a name, or a
 * watched directory goes. `changed` may free the watch, and returns what a
 * source callback returns. NULL and `error` when nothing can be watched. */
ReachdSocketWatch *reachd_socket_watch_new (ReachdDaemonPaths *paths, GMainContext *context, GSourceFunc changed,
                                            gpointer data, GError **error);
void reachd_socket_watch_free (ReachdSocketWatch *watch);

G_END_DECLS
