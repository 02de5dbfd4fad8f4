/* GNetworkMonitor from reachd's socket.
 *
 * init subscribes to the daemon (the socket `reachd status` would use) and
 * waits for its first status, at most INIT_DEADLINE_US: GLib calls it on
 * the app's main thread. With no daemon (nothing listens, a refusal, an
 * end) init fails and GLib takes the next backend. A daemon connected but
 * silent at the deadline (starting, or stopped) is followed all the same,
 * GLib's backend answering until it speaks (start_on_glibs_backend).
 * Afterwards the subscription is read on the thread-default main context of
 * the monitor's creation, with no thread and no timer of its own while the
 * daemon is there: the daemon sends a summary only when it changes, and the
 * module signals `network-changed` once for a status whose changes GLib
 * counts as a change of configuration (a handover included, where the three
 * properties stay as they were), or that moved one of GNetworkMonitor's
 * three properties; a status with neither (links a container made) signals
 * nothing.
 *
 * When the daemon goes away (or sends what reachd never sends) the module
 * keeps the last state and reconnects with capped backoff, or, where no
 * daemon's socket exists, when one is made (reachd-socket-watch.c), with no
 * timer; the first status of the new subscription is compared like any
 * other, so a restart that changes nothing signals nothing.
 *
 * A daemon that stops answering (SIGSTOP, a deadlock) is noticed within
 * REACHD_PROBE_SPACING_MS + REACHD_PROBE_DEADLINE_MS of the next change the
 * kernel reports (reachd-liveness.c); meanwhile the module answers from the
 * backend GLib would have chosen without it (NetworkManager's, else
 * netlink's), made by name through the extension point on a thread of its
 * own (reachd-fallback.c: the app's loop never waits for it), and forwards
 * its changes: all of them from one that knows connectivity and metering,
 * only availability from netlink's, which knows routes alone. When the daemon
 * answers again, its state is compared like any other: nothing changed,
 * nothing is signalled.
 *
 * A daemon whose status names another network namespace than the app's
 * (its socket path reached the app through a shared filesystem: `ip netns
 * exec`, PrivateNetwork=yes) is no daemon, and its path is not asked again:
 * init fails, and GLib takes its netlink backend, which sees the app's own
 * network; found later, the module follows GLib's backend instead.
 *
 * can_reach is asked of GLib's backend while that answers for the daemon,
 * else of the daemon's per-destination lookup (reachd-reach.c). */
#include "reachd-network-monitor.h"
#include "reachd-daemon-line.h"
#include "reachd-daemon-socket.h"
#include "reachd-fallback.h"
#include "reachd-liveness.h"
#include "reachd-reach.h"
#include "reachd-socket-watch.h"

#include <unistd.h>

#include <glib-unix.h>

#define INIT_DEADLINE_US (250 * G_TIME_SPAN_MILLISECOND)
/* How long init then waits for GLib's backend to be made, when the daemon
 * took the connection but is silent: netlink's takes milliseconds, and
 * NetworkManager's a D-Bus round trip, unless it is busy (at boot). */
#define INIT_BACKEND_WAIT_US G_TIME_SPAN_SECOND

struct _ReachdNetworkMonitor
{
  GObject parent_instance;

  GMainContext *context;
  /* Where the daemon listens, worked out once by init, and which of those
   * daemons serve another network namespace; can_reach's queries share it,
   * from any thread. */
  ReachdDaemonPaths *paths;
  /* The path followed (an index into `paths`), -1 while none is. */
  gint followed;
  /* The subscription: -1 while the daemon is away. */
  int fd;
  GSource *readable;
  ReachdLineBuffer lines;
  /* Pending reconnection, while the daemon is away. */
  GSource *retry;
  guint failures;
  /* In place of `retry` while nothing listens at any socket: where the
   * sockets would appear. */
  ReachdSocketWatch *sockets;
  /* When the subscription's first status came (0: none yet): the Swift
   * client's clock for REACHD_STABLE_MS too (DaemonDiscovery.answeredAt). */
  gint64 followed_since;
  /* Its first status has yet to say which network it serves. */
  gboolean first_pending;
  /* The daemon's newest state: what is published, but while it stalls;
   * GLib's backend's first, when init began on it. */
  ReachdHostState daemon_state;
  ReachdLiveness *liveness;
  /* GLib's own backend, on a thread of its own, while the daemon does not
   * answer. Written on `context`; read by can_reach from any thread. */
  GMutex fallback_lock;
  ReachdFallback *fallback;

  /* Read from any thread (the getters); written on `context`. */
  gint available;
  gint connectivity;
  gint metered;
};

enum
{
  PROP_0,
  PROP_NETWORK_AVAILABLE,
  PROP_NETWORK_METERED,
  PROP_CONNECTIVITY,
};

static void reachd_network_monitor_iface_init (GNetworkMonitorInterface *iface);
static void reachd_network_monitor_initable_iface_init (GInitableIface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (ReachdNetworkMonitor, reachd_network_monitor, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE, reachd_network_monitor_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_NETWORK_MONITOR, reachd_network_monitor_iface_init))

/* ---- Following the daemon ---- */

static void schedule_retry (ReachdNetworkMonitor *self);
static gboolean await_sockets (ReachdNetworkMonitor *self);
static gboolean on_subscription_readable (int fd, GIOCondition condition, gpointer user_data);

static void
store (ReachdNetworkMonitor *self, const ReachdHostState *host)
{
  g_atomic_int_set (&self->available, host->available);
  g_atomic_int_set (&self->connectivity, host->connectivity);
  g_atomic_int_set (&self->metered, host->metered);
}

/* Takes `host` in; `reconfigured`: the daemon said the configuration
 * changed, whatever the properties do. */
static void
apply (ReachdNetworkMonitor *self, const ReachdHostState *host, gboolean reconfigured)
{
  gboolean available_changed = g_atomic_int_get (&self->available) != host->available;
  gboolean connectivity_changed = g_atomic_int_get (&self->connectivity) != (gint) host->connectivity;
  gboolean metered_changed = g_atomic_int_get (&self->metered) != host->metered;
  if (!available_changed && !connectivity_changed && !metered_changed && !reconfigured)
    return;
  store (self, host);
  g_object_freeze_notify (G_OBJECT (self));
  if (available_changed)
    g_object_notify (G_OBJECT (self), "network-available");
  if (connectivity_changed)
    g_object_notify (G_OBJECT (self), "connectivity");
  if (metered_changed)
    g_object_notify (G_OBJECT (self), "network-metered");
  g_object_thaw_notify (G_OBJECT (self));
  g_signal_emit_by_name (self, "network-changed", host->available);
}

static void
drop_subscription (ReachdNetworkMonitor *self)
{
  reachd_clear_source (&self->readable);
  if (self->fd >= 0)
    {
      close (self->fd);
      self->fd = -1;
    }
  reachd_line_buffer_reset (&self->lines);
}

/* ---- GLib's backend, while the daemon does not answer ---- */

static void
on_fallback_changed (const ReachdFallbackState *state, gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  ReachdHostState host = self->daemon_state;
  if (state->knows_all || state->available != host.available)
    {
      /* Netlink's backend says never metered, and FULL or LOCAL by routes
       * alone: what the daemon found of the rest (a portal, a metered link)
       * stands for as long as the routes agree with it, and no longer. */
      host.available = state->available;
      host.connectivity = state->connectivity;
      host.metered = state->metered;
    }
  apply (self, &host, FALSE);
}

/* The daemon does not answer: the backend GLib would have chosen without
 * the module answers, as it would for the app, once made (the app's loop
 * does not wait for that; the daemon's last state stands meanwhile; only
 * init waits, bounded, for a first state: start_on_glibs_backend). */
static void
enter_fallback (ReachdNetworkMonitor *self)
{
  if (self->fallback != NULL)
    return;
  ReachdFallback *fallback = reachd_fallback_start (self->context, on_fallback_changed, self);
  g_mutex_lock (&self->fallback_lock);
  self->fallback = fallback;
  g_mutex_unlock (&self->fallback_lock);
}

static void
drop_fallback (ReachdNetworkMonitor *self)
{
  if (self->fallback == NULL)
    return;
  g_mutex_lock (&self->fallback_lock);
  ReachdFallback *fallback = g_steal_pointer (&self->fallback);
  g_mutex_unlock (&self->fallback_lock);
  reachd_fallback_stop (fallback);
}

/* The daemon answers: its state stands, compared like any other, whatever
 * GLib's backend said meanwhile. */
/* `reconfigured`, `handover`: what the statuses taken said of their changes
 * (ReachdLine). */
static void
take_daemon_state (ReachdNetworkMonitor *self, const ReachdHostState *host, gboolean reconfigured,
                   gboolean handover)
{
  /* While GLib's backend answered, what moved the three properties was
   * signalled; a handover was not (only they are passed on), so of the
   * changes the daemon says it made meanwhile, a handover still signals. */
  gboolean after_fallback = self->fallback != NULL;
  self->daemon_state = *host;
  drop_fallback (self);
  apply (self, host, after_fallback ? handover : reconfigured);
}

/* GLib's backend while the daemon does not answer, with a reference; NULL
 * while it does. From any thread. */
static ReachdFallback *
ref_fallback (ReachdNetworkMonitor *self)
{
  g_mutex_lock (&self->fallback_lock);
  ReachdFallback *fallback = self->fallback != NULL ? reachd_fallback_ref (self->fallback) : NULL;
  g_mutex_unlock (&self->fallback_lock);
  return fallback;
}

static void
on_liveness (gboolean answering, const char *line, gsize length, gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  if (!answering)
    {
      enter_fallback (self);
      return;
    }
  /* The subscription spoke first (its state stands, and may be newer than
   * this answer), or GLib's backend never took over. Before the
   * subscription's first status, nothing of this daemon's is taken: that
   * status, which follows, says whether it serves the app's network. */
  if (self->fallback == NULL || self->first_pending)
    return;
  /* Its answer to the question is its state now; an error line (it
   * refused the question) leaves the subscription's last word. */
  ReachdLine answer;
  ReachdHostState host = self->daemon_state;
  if (reachd_line_parse (line, length, &answer, NULL))
    {
      if (answer.type == REACHD_LINE_STATUS)
        host = answer.host;
      reachd_line_clear (&answer);
    }
  take_daemon_state (self, &host, FALSE, FALSE);
}

/* ---- The subscription ---- */

static void
follow (ReachdNetworkMonitor *self, int fd, gint path)
{
  reachd_liveness_follow (self->liveness, reachd_daemon_paths_path (self->paths, path), fd, &self->lines);
  self->followed = path;
  self->fd = fd;
  self->followed_since = 0;
  self->first_pending = TRUE;
  self->readable = reachd_attach_source (g_unix_fd_source_new (fd, G_IO_IN | G_IO_HUP | G_IO_ERR),
                                         G_SOURCE_FUNC (on_subscription_readable), self,
                                         "[reachd-gio] subscription", self->context);
}

/* The daemon is gone, or sent what reachd never sends: keep the state, try
 * again later. */
static void
lose (ReachdNetworkMonitor *self, const GError *error)
{
  g_debug ("reachd: %s; keeping the last state and reconnecting", error->message);
  gint64 stable = REACHD_STABLE_MS * G_TIME_SPAN_MILLISECOND;
  if (self->followed_since != 0 && g_get_monotonic_time () - self->followed_since >= stable)
    self->failures = 0;
  drop_subscription (self);
  reachd_liveness_follow (self->liveness, NULL, -1, NULL);
  self->followed = -1;
  if (reachd_daemon_paths_any_left (self->paths))
    schedule_retry (self);
  else
    /* No daemon of this network to wait for: no timer, and GLib's backend,
     * which sees this network, answers. */
    enter_fallback (self);
}

static gboolean
on_subscription_readable (int fd, GIOCondition condition, gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  (void) condition;
  g_autoptr (GError) read_error = NULL;
  g_autoptr (GError) line_error = NULL;
  ReachdHostState newest;
  gboolean have_status = FALSE;
  gboolean reconfigured = FALSE;
  gboolean handover = FALSE;
  gboolean open = reachd_read_available (fd, &self->lines, REACHD_READ_PER_WAKEUP, &read_error);
  /* What came before the end, or before a bad line, still counts. */
  gboolean usable = reachd_line_buffer_take_statuses (&self->lines, &newest, &have_status, &reconfigured, &handover, &line_error);
  if (have_status && self->followed_since == 0)
    self->followed_since = g_get_monotonic_time ();
  if (have_status && self->first_pending)
    {
      self->first_pending = FALSE;
      g_autoptr (GError) other = reachd_daemon_paths_check_ours (self->paths, self->followed, &newest.network, fd);
      if (other != NULL)
        {
          lose (self, other);
          return G_SOURCE_REMOVE;
        }
    }
  /* A line on the subscription is the daemon speaking again, too: a
   * question out to it is answered. */
  if (have_status)
    {
      reachd_liveness_heard (self->liveness);
      take_daemon_state (self, &newest, reconfigured, handover);
    }
  if (open && usable)
    return G_SOURCE_CONTINUE;
  /* Destroying the source that is dispatching is allowed. */
  lose (self, line_error != NULL ? line_error : read_error);
  return G_SOURCE_REMOVE;
}

static gboolean
on_retry (gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  g_clear_pointer (&self->retry, g_source_unref);
  g_autoptr (GError) error = NULL;
  gint path = -1;
  gboolean nothing_listens;
  int fd = reachd_daemon_paths_connect_first (self->paths, REACHD_SUBSCRIBE_SUMMARY, &path, &nothing_listens, &error);
  if (fd < 0)
    {
      g_debug ("reachd: %s", error->message);
      /* A question from can_reach may have found the last path foreign. */
      if (!reachd_daemon_paths_any_left (self->paths))
        enter_fallback (self);
      else if (!nothing_listens || !await_sockets (self))
        schedule_retry (self);
      return G_SOURCE_REMOVE;
    }
  g_clear_pointer (&self->sockets, reachd_socket_watch_free);
  /* Its first status is compared with the state kept meanwhile. */
  follow (self, fd, path);
  return G_SOURCE_REMOVE;
}

static gboolean
on_sockets_changed (gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  /* Freed while its source dispatches, which GLib allows; the try after
   * the watch was set may be pending still. */
  g_clear_pointer (&self->sockets, reachd_socket_watch_free);
  reachd_clear_source (&self->retry);
  /* News of the daemon: its socket may be a moment from listening, so a
   * refusal now is tried again at once, then after the shortest wait. */
  self->failures = 0;
  on_retry (self);
  return G_SOURCE_REMOVE;
}

/* No socket at any path (no daemon, and no socket unit holding its
 * place): instead of a timer (an app tried every 5 s for as long as it
 * ran), a watch of where the sockets would appear, then one more try, for
 * a socket made before the watch was set. Already watching, that try found
 * nothing: the watch says when to look again. FALSE when nothing can be
 * watched: the timer, then. */
static gboolean
await_sockets (ReachdNetworkMonitor *self)
{
  if (self->sockets != NULL)
    return TRUE;
  g_autoptr (GError) error = NULL;
  self->sockets = reachd_socket_watch_new (self->paths, self->context, on_sockets_changed, self, &error);
  if (self->sockets == NULL)
    {
      g_debug ("reachd: %s; trying the daemon on a timer", error->message);
      return FALSE;
    }
  self->retry = reachd_attach_source (g_timeout_source_new (0), on_retry, self, "[reachd-gio] reconnect", self->context);
  return TRUE;
}

/* After REACHD_RETRY_FIRST_MS the first time (under reachd.socket the connection
 * restarts the daemon), then after waits that double up to REACHD_RETRY_MAX_MS:
 * the Swift client's schedule (RetrySchedule, Backoff). */
static void
schedule_retry (ReachdNetworkMonitor *self)
{
  guint delay = MIN (REACHD_RETRY_MAX_MS, REACHD_RETRY_FIRST_MS << MIN (self->failures, 16u));
  self->failures++;
  self->retry = reachd_attach_source (g_timeout_source_new (delay), on_retry, self, "[reachd-gio] reconnect", self->context);
}

/* ---- GInitable ---- */

/* Init's deadline passed with the daemon at `path` connected but silent:
 * starting under socket activation (slow on a loaded machine: at boot or
 * login, when apps start too), or stopped. Failing init would leave the
 * app on GLib's backend for its whole life; instead the module follows
 * that backend, as for a daemon that stops answering, until the daemon
 * speaks on the subscription, and starts from what the backend says once
 * made, waited for here as GLib would have waited to make it, but at most
 * INIT_BACKEND_WAIT_US. Without it, what GLib's base monitor assumes
 * (available, full), until the backend says otherwise. */
static ReachdHostState
start_on_glibs_backend (ReachdNetworkMonitor *self, gint path)
{
  g_debug ("reachd: the daemon at %s did not answer within %d ms; following GLib's backend until it does",
           reachd_daemon_paths_path (self->paths, path), (int) (INIT_DEADLINE_US / G_TIME_SPAN_MILLISECOND));
  enter_fallback (self);
  ReachdHostState host = { .available = TRUE, .connectivity = G_NETWORK_CONNECTIVITY_FULL };
  ReachdFallbackState backend;
  if (reachd_fallback_wait_made (self->fallback, g_get_monotonic_time () + INIT_BACKEND_WAIT_US, &backend))
    {
      host.available = backend.available;
      host.connectivity = backend.connectivity;
      host.metered = backend.metered;
    }
  return host;
}

static gboolean
reachd_network_monitor_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (initable);
  (void) cancellable;
  gint64 deadline = g_get_monotonic_time () + INIT_DEADLINE_US;
  self->paths = reachd_daemon_paths_new ();
  g_autoptr (GString) failures = g_string_new (NULL);
  guint tried = 0, foreign = 0;
  for (gint path = 0; reachd_daemon_paths_path (self->paths, path) != NULL; path++)
    {
      g_autoptr (GError) attempt = NULL;
      ReachdHostState host;
      gboolean answered, other_network;
      int fd = reachd_daemon_paths_subscribe_now (self->paths, path, deadline, &self->lines, &host, &answered,
                                                  &other_network, &attempt);
      if (fd >= 0)
        {
          self->context = g_main_context_ref_thread_default ();
          self->liveness = reachd_liveness_new (self->context, on_liveness, self);
          if (!answered)
            host = start_on_glibs_backend (self, path);
          store (self, &host);
          self->daemon_state = host;
          follow (self, fd, path);
          if (answered)
            self->followed_since = g_get_monotonic_time ();
          return TRUE;
        }
      tried++;
      if (other_network)
        foreign++;
      reachd_line_buffer_reset (&self->lines);
      g_string_append_printf (failures, "%s%s", failures->len > 0 ? "; " : "", attempt->message);
    }
  /* GLib takes its next backend, which, unlike another network's daemon,
   * sees this one. */
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED, "reachd's network monitor is not available (%s)%s",
               failures->str,
               foreign == tried ? "; GLib's own monitor answers for this network namespace"
                                : ": start reachd (systemctl start reachd.socket)");
  return FALSE;
}

static void
reachd_network_monitor_initable_iface_init (GInitableIface *iface)
{
  iface->init = reachd_network_monitor_initable_init;
}

/* ---- can_reach ---- */

static gboolean
reachd_network_monitor_can_reach (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                  GCancellable *cancellable, GError **error)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (monitor);
  /* The daemon would not answer: GLib's backend does, as for the state.
   * Not made yet, or stopped: the daemon is asked. */
  ReachdFallback *fallback = ref_fallback (self);
  if (fallback != NULL)
    {
      gboolean asked;
      gboolean through_glib = reachd_fallback_can_reach (fallback, connectable, cancellable, &asked, error);
      reachd_fallback_unref (fallback);
      if (asked)
        return through_glib;
    }
  return reachd_reach_sync (monitor, self->paths, connectable, cancellable, error);
}

static void
reachd_network_monitor_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                        GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (monitor);
  GTask *task = g_task_new (monitor, cancellable, callback, user_data);
  g_task_set_source_tag (task, reachd_network_monitor_can_reach_async);
  ReachdFallback *fallback = ref_fallback (self);
  gboolean asked = fallback != NULL && reachd_fallback_can_reach_async (fallback, connectable, task);
  if (fallback != NULL)
    reachd_fallback_unref (fallback);
  if (asked)
    return;
  reachd_reach_async (task, self->paths, connectable);
}

static gboolean
reachd_network_monitor_can_reach_finish (GNetworkMonitor *monitor, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, monitor), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* ---- GObject ---- */

static void
reachd_network_monitor_init (ReachdNetworkMonitor *self)
{
  self->fd = -1;
  self->followed = -1;
  self->connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
  reachd_line_buffer_init (&self->lines);
  g_mutex_init (&self->fallback_lock);
}

static void
reachd_network_monitor_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (object);
  switch (prop_id)
    {
    case PROP_NETWORK_AVAILABLE:
      g_value_set_boolean (value, g_atomic_int_get (&self->available));
      break;
    case PROP_NETWORK_METERED:
      g_value_set_boolean (value, g_atomic_int_get (&self->metered));
      break;
    case PROP_CONNECTIVITY:
      g_value_set_enum (value, g_atomic_int_get (&self->connectivity));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
    }
}

static void
reachd_network_monitor_finalize (GObject *object)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (object);
  drop_subscription (self);
  drop_fallback (self);
  g_clear_pointer (&self->liveness, reachd_liveness_free);
  g_mutex_clear (&self->fallback_lock);
  reachd_line_buffer_clear (&self->lines);
  reachd_clear_source (&self->retry);
  g_clear_pointer (&self->sockets, reachd_socket_watch_free);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_clear_pointer (&self->paths, reachd_daemon_paths_free);
  G_OBJECT_CLASS (reachd_network_monitor_parent_class)->finalize (object);
}

static void
reachd_network_monitor_class_init (ReachdNetworkMonitorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->get_property = reachd_network_monitor_get_property;
  object_class->finalize = reachd_network_monitor_finalize;
  g_object_class_override_property (object_class, PROP_NETWORK_AVAILABLE, "network-available");
  g_object_class_override_property (object_class, PROP_NETWORK_METERED, "network-metered");
  g_object_class_override_property (object_class, PROP_CONNECTIVITY, "connectivity");
}

static void
reachd_network_monitor_class_finalize (ReachdNetworkMonitorClass *klass)
{
  (void) klass;
}

static void
reachd_network_monitor_iface_init (GNetworkMonitorInterface *iface)
{
  iface->can_reach = reachd_network_monitor_can_reach;
  iface->can_reach_async = reachd_network_monitor_can_reach_async;
  iface->can_reach_finish = reachd_network_monitor_can_reach_finish;
}

void
reachd_network_monitor_register (GIOModule *module)
{
  reachd_network_monitor_register_type (G_TYPE_MODULE (module));
  g_io_extension_point_implement (G_NETWORK_MONITOR_EXTENSION_POINT_NAME, REACHD_TYPE_NETWORK_MONITOR, "reachd",
                                  REACHD_NETWORK_MONITOR_PRIORITY);
}
