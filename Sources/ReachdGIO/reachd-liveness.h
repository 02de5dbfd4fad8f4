/* Notices that the daemon a monitor follows stopped answering (SIGSTOP, a
 * debugger, a deadlock), with no timer while the network is quiet: the
 * Swift clients' DaemonLiveness, on a GLib main context.
 *
 * A subscription alone can't tell a silent daemon from a quiet network. The
 * kernel can tell when there is something to publish: a netlink socket of
 * our own (the sentinel) on the groups the daemon follows, only drained.
 * After a kernel change the subscription has REACHD_NEWS_GRACE_MS to bring
 * a status written after it (past what was queued when the change was
 * heard): the daemon runs, and is asked nothing. Otherwise it is asked for
 * a status on a connection of its own (`get`), and must answer within a
 * second; at most one question per REACHD_PROBE_SPACING_MS. A question that
 * got no answer stays open: the daemon's answer, once it resumes, says it
 * is back. Timers exist only while a change waits for its news or a
 * question is out. */
#pragma once

#include <glib.h>

#include "reachd-daemon-line.h"

G_BEGIN_DECLS

#define REACHD_PROBE_SPACING_MS 500
#define REACHD_PROBE_DEADLINE_MS 1000
/* At most the spacing, so that a change is still noticed within 1.5 s. */
#define REACHD_NEWS_GRACE_MS 250

typedef struct _ReachdLiveness ReachdLiveness;

/* Told when the daemon stops answering (`answering` FALSE), and when it
 * answers again (TRUE), with the status line it answered with. */
typedef void (*ReachdLivenessChanged) (gboolean answering, const char *line, gsize length, gpointer user_data);

/* Sources are attached to `context`. NULL when no netlink socket can be had:
 * a stopped daemon then goes unnoticed, as before. */
ReachdLiveness *reachd_liveness_new (GMainContext *context, ReachdLivenessChanged changed, gpointer user_data);
void reachd_liveness_free (ReachdLiveness *liveness);

/* Watches the daemon at `path`, subscribed to from now on on `subscription`,
 * whose bytes `lines` counts; NULL: none. What was said about another
 * daemon is forgotten. */
void reachd_liveness_follow (ReachdLiveness *liveness, const char *path, int subscription, const ReachdLineBuffer *lines);

/* The subscription spoke: a status written after the last change heard
 * shows the daemon running, so the question due for it is not asked, and
 * one out is answered; a stall is over (the caller takes the subscription's
 * state; nothing is told). */
void reachd_liveness_heard (ReachdLiveness *liveness);

G_END_DECLS
