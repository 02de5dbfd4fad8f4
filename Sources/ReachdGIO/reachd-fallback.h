/* The backend GLib would have chosen without the module (NetworkManager's,
 * else netlink's), made and run on a thread of its own, for as long as the
 * daemon does not answer.
 *
 * Made on the app's main thread, it blocked the app's main loop for as long
 * as making it takes: NetworkManager's asks for its properties over D-Bus
 * and waits (25 s at worst), and it and netlink's both dump the routing
 * table first (seconds with a full BGP table). GLib's backends are
 * GInitable only, never async, and bind their sources to the thread-default
 * main context of their making: so a thread of the module's own makes one
 * under a main context of its own and runs it there, and what it says comes
 * to the app's context as a value, by an idle source. The thread exists only
 * while the daemon does not answer; the app's loop never waits for it (init
 * alone may wait, a bounded time, for its first state). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _ReachdFallback ReachdFallback;

/* What the backend says, each time it changes and once made. `knows_all`:
 * it knows connectivity and metering (NetworkManager's, the portal's), not
 * routes alone (netlink's). */
typedef struct
{
  gboolean available;
  GNetworkConnectivity connectivity;
  gboolean metered;
  gboolean knows_all;
} ReachdFallbackState;

/* Called on `context`, until reachd_fallback_stop. */
typedef void (*ReachdFallbackChanged) (const ReachdFallbackState *state, gpointer user_data);

/* Starts making the backend, at once and without waiting. */
ReachdFallback *reachd_fallback_start (GMainContext *context, ReachdFallbackChanged changed, gpointer user_data);

/* Nothing more is told; the backend is dropped on its thread, which then
 * ends once the questions put to it are answered. Never waits. Drops the
 * caller's reference. */
void reachd_fallback_stop (ReachdFallback *fallback);

/* Waits until the thread has made the backend, at most until `deadline`
 * (monotonic), and gives its state then: FALSE when none of GLib's could be
 * made, or not by then. For init alone, which GLib runs on the app's
 * thread: unbounded, it would hang for good where that thread holds a lock
 * the backend's making needs (GLib's type lock, when the monitor is first
 * asked for from a class_init). The state is told as well, as usual. */
gboolean reachd_fallback_wait_made (ReachdFallback *fallback, gint64 deadline, ReachdFallbackState *state);

ReachdFallback *reachd_fallback_ref (ReachdFallback *fallback);
void reachd_fallback_unref (ReachdFallback *fallback);

/* Asks the backend's can_reach_async on its own thread (its state is that
 * thread's alone), with `task`'s cancellable, and returns its answer on
 * `task` from the caller's thread-default context. TRUE takes `task`.
 * FALSE, and `task` left to the caller, before the backend is made and
 * once stopped: the caller answers otherwise. From any thread. */
gboolean reachd_fallback_can_reach_async (ReachdFallback *fallback, GSocketConnectable *connectable, GTask *task);

/* The same, waited for; `asked` FALSE when the backend does not run (yet):
 * the caller answers otherwise. From any thread. */
gboolean reachd_fallback_can_reach (ReachdFallback *fallback, GSocketConnectable *connectable,
                                    GCancellable *cancellable, gboolean *asked, GError **error);

G_END_DECLS
