/* Notices that the daemon a monitor follows stopped answering (SIGSTOP, a
 * debugger, a deadlock), with no timer while the network is quiet: the
 * Swift clients' DaemonLiveness, on a GLib main context.
 *
 * A subscription alone can't tell a silent daemon from a quiet network. The
 * kernel can tell when there is something to publish: a netlink socket of
 * our own (the sentinel) on the groups the daemon follows, only drained.
 * After a kernel change the daemon is asked for a status on a connection of
 * its own (`get`), and must answer within a second; at most one question
 * per REACHD_PROBE_SPACING_MS. A question that got no answer stays open:
 * the daemon's answer, once it resumes, says it is back. Timers exist only
 * while a question is out or waits for its spacing. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define REACHD_PROBE_SPACING_MS 500
#define REACHD_PROBE_DEADLINE_MS 1000

typedef struct _ReachdLiveness ReachdLiveness;

/* Told when the daemon stops answering (`answering` FALSE), and when it
 * answers again (TRUE), with the status line it answered with. */
typedef void (*ReachdLivenessChanged) (gboolean answering, const char *line, gsize length, gpointer user_data);

/* Sources are attached to `context`. NULL when no netlink socket can be had:
 * a stopped daemon then goes unnoticed, as before. */
ReachdLiveness *reachd_liveness_new (GMainContext *context, ReachdLivenessChanged changed, gpointer user_data);
void reachd_liveness_free (ReachdLiveness *liveness);

/* Watches the daemon at `path`, subscribed to from now on; NULL: none. What
 * was said about another daemon is forgotten. */
void reachd_liveness_follow (ReachdLiveness *liveness, const char *path);

/* The subscription spoke: the daemon answers. A question out to it is
 * answered by that, and a stall is over (the caller takes the
 * subscription's state; nothing is told). */
void reachd_liveness_heard (ReachdLiveness *liveness);

G_END_DECLS
