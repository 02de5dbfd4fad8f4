/* Talking to the daemon's socket, for the monitor, its liveness probe and
 * can_reach's queries: where the daemon listens, connections that never
 * block, reads that never block the app's main loop; and init's first
 * subscription, the one wait, bounded by init's deadline. */
#pragma once

#include <gio/gio.h>

#include "reachd-daemon-line.h"

G_BEGIN_DECLS

/* Where the daemon listens, in the order `reachd status` tries them, and
 * which of those daemons serve another network namespace, so that neither
 * the subscription nor a query asks them again. Thread-safe: the paths are
 * worked out once, by new, and never change; the flags are read and
 * written atomically, on the monitor's context by the subscription and on
 * whatever thread can_reach is asked by its queries. */
typedef struct _ReachdDaemonPaths ReachdDaemonPaths;

ReachdDaemonPaths *reachd_daemon_paths_new (void);
void reachd_daemon_paths_free (ReachdDaemonPaths *paths);

/* The path at `index`, NULL just past the last one. */
const char *reachd_daemon_paths_path (ReachdDaemonPaths *paths, gint index);

/* Connects to the first daemon not found to serve another network
 * namespace and sends `requests`; `taken` says which (an index for
 * reachd_daemon_paths_check_ours). -1, with the last failure in `error`,
 * when none takes them, and `nothing_listens` (if not NULL) TRUE when no
 * path tried had a socket at all (ENOENT). A socket that refuses may be
 * one bound a moment before its daemon listens, which no watch tells. */
int reachd_daemon_paths_connect_first (ReachdDaemonPaths *paths, const char *requests, gint *taken,
                                       gboolean *nothing_listens, GError **error);

/* Whether the daemon at `index`, whose status said it serves `network`,
 * serves the namespace of its connection `fd`: NULL if so; else it is not
 * asked again, and the error says why. What every reader of a first status
 * asks (the subscription, init's, a reach query's). */
GError *reachd_daemon_paths_check_ours (ReachdDaemonPaths *paths, gint index, const ReachdNamespace *network, int fd);

/* The daemon at `index` was found to serve another network namespace. */
gboolean reachd_daemon_paths_is_foreign (ReachdDaemonPaths *paths, gint index);
/* Some daemon has not been found to serve another network namespace. */
gboolean reachd_daemon_paths_any_left (ReachdDaemonPaths *paths);

/* What the monitor sends to subscribe: the summary, sent when it changes. */
/* One summary: what a reach query and the liveness probe ask first. */
#define REACHD_GET_SUMMARY "{\"op\":\"get\",\"detail\":\"summary\"}\n"
#define REACHD_SUBSCRIBE_SUMMARY "{\"op\":\"subscribe\",\"detail\":\"summary\"}\n"

/* Subscribes to the daemon at `index` and waits for its first status, in
 * `host`, until `deadline` (monotonic): the socket then, `answered`, with
 * what came after the status in `lines`. The socket also when the deadline
 * passed with the daemon connected but silent (`answered` FALSE, `host`
 * untouched): one starting under socket activation, or stopped. Else -1
 * and `error`: no daemon, a refusal, an end, or a daemon of another network
 * namespace, which is marked so (`foreign`), as by
 * reachd_daemon_paths_check_ours. Blocks: for init. */
int reachd_daemon_paths_subscribe_now (ReachdDaemonPaths *paths, gint index, gint64 deadline, ReachdLineBuffer *lines,
                                       ReachdHostState *host, gboolean *answered, gboolean *foreign, GError **error);

/* Connects to `path` without blocking (a full listen queue fails with
 * EAGAIN) and sends `requests` in one write; -1 with `error` otherwise. */
int reachd_connect_and_send (const char *path, const char *requests, GError **error);

/* A `limit` for reachd_read_available: a daemon that writes without end
 * can't hold the app's main loop; what is left is read on the next
 * iteration. */
#define REACHD_READ_PER_WAKEUP (64 * 1024)

/* Reads what is there, at most `limit` bytes, into `lines`. FALSE at the
 * end of the stream or on an error; TRUE when the socket has nothing more
 * now. */
gboolean reachd_read_available (int fd, ReachdLineBuffer *lines, gsize limit, GError **error);

/* Attaches `source` to `context` under `name` (what GLib's debugging tools
 * show), calling `callback` with `data`: every source this module makes.
 * Returns `source`, still referenced, for reachd_clear_source. */
static inline GSource *
reachd_attach_source (GSource *source, GSourceFunc callback, gpointer data, const char *name, GMainContext *context)
{
  g_source_set_callback (source, callback, data, NULL);
  g_source_set_static_name (source, name);
  g_source_attach (source, context);
  return source;
}

/* Destroys a source this module attached, if there is one: the sources
 * that read the daemon's sockets, and the timers beside them. */
static inline void
reachd_clear_source (GSource **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}

G_END_DECLS
