/* GNetworkMonitor from reachd's socket.
 *
 * init subscribes to the daemon (the socket `reachd status` would use) and
 * waits for its first status, at most INIT_DEADLINE_US: GLib calls it on
 * the app's main thread. Without an answer init fails and GLib takes the
 * next backend. Afterwards the subscription is read on the thread-default
 * main context of the monitor's creation, with no thread and no timer of
 * its own while the daemon is there: the daemon sends a summary only when
 * it changes, and the module signals `network-changed` once for a status
 * whose changes GLib counts as a change of configuration (a handover
 * included, where the three properties stay as they were), or that moved
 * one of GNetworkMonitor's three properties; a status with neither (links
 * a container made) signals nothing.
 *
 * When the daemon goes away (or sends what reachd never sends) the module
 * keeps the last state and reconnects with capped backoff; the first status
 * of the new subscription is compared like any other, so a restart that
 * changes nothing signals nothing.
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
 * can_reach asks the daemon's per-destination lookup (`{"op":"reach"}`),
 * which routes as the app's own uid would, after a `get` whose status says
 * the daemon serves the app's network. */
/* secure_getenv */
#define _GNU_SOURCE
#include "reachd-network-monitor.h"
#include "reachd-daemon-line.h"
#include "reachd-daemon-socket.h"
#include "reachd-fallback.h"
#include "reachd-liveness.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>

#define INIT_DEADLINE_US (250 * G_TIME_SPAN_MILLISECOND)
/* As reachd's own clients: a second for the daemon, six for a name. */
#define REACH_DEADLINE_US (7 * G_TIME_SPAN_SECOND)
#define RETRY_FIRST_MS 100
#define RETRY_MAX_MS 5000
/* A subscription that lasted this long was a daemon that worked: its end (a
 * restart) is retried at once. One that ended sooner, status or not, backs
 * off, so a daemon that answers and hangs up can't spin the app's loop. */
#define STABLE_US G_TIME_SPAN_SECOND
/* Read per wake-up: a daemon that writes without end can't hold the app's
 * main loop; what is left is read on the next iteration. */
#define READ_PER_WAKEUP (64 * 1024)

struct _ReachdNetworkMonitor
{
  GObject parent_instance;

  GMainContext *context;
  /* Where the daemon listens, worked out once by init; read by can_reach
   * from any thread. */
  GStrv paths;
  /* Per path, atomically: its daemon serves another network namespace, so
   * it is not asked again. */
  gint *foreign;
  /* The path followed (an index into `paths`), -1 while none is. */
  gint followed;
  /* The subscription: -1 while the daemon is away. */
  int fd;
  GSource *readable;
  ReachdLineBuffer lines;
  /* Pending reconnection, while the daemon is away. */
  GSource *retry;
  guint failures;
  /* When the subscription began. */
  gint64 followed_since;
  /* Its first status has yet to say which network it serves. */
  gboolean first_pending;
  /* The daemon's newest state: what is published, but while it stalls. */
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

/* ---- The daemon's socket ---- */

/* Where reachd listens, in the order `reachd status` tries them:
 * $REACHD_SOCKET alone if set; else the user's own daemon's
 * ($XDG_RUNTIME_DIR/reachd.sock; root's is the system one), then the
 * system daemon's. With secure_getenv: a setuid GLib program must not be
 * pointed at a socket its caller chose. */
static GStrv
socket_paths (void)
{
  GPtrArray *paths = g_ptr_array_new ();
  const char *explicit = secure_getenv ("REACHD_SOCKET");
  const char *runtime = secure_getenv ("XDG_RUNTIME_DIR");
  if (explicit != NULL && *explicit != '\0')
    g_ptr_array_add (paths, g_strdup (explicit));
  else
    {
      if (getuid () != 0 && runtime != NULL && *runtime != '\0')
        g_ptr_array_add (paths, g_build_filename (runtime, "reachd.sock", NULL));
      g_ptr_array_add (paths, g_strdup ("/run/reachd/reachd.sock"));
    }
  g_ptr_array_add (paths, NULL);
  return (GStrv) g_ptr_array_free (paths, FALSE);
}

static gboolean
is_foreign (ReachdNetworkMonitor *self, gint index)
{
  return g_atomic_int_get (&self->foreign[index]);
}

/* Its daemon serves another network namespace: never asked again. */
static void
mark_foreign (ReachdNetworkMonitor *self, gint index)
{
  g_debug ("reachd: the daemon at %s serves another network namespace; not asking it again", self->paths[index]);
  g_atomic_int_set (&self->foreign[index], TRUE);
}

static gboolean
any_path_left (ReachdNetworkMonitor *self)
{
  for (gint i = 0; self->paths[i] != NULL; i++)
    if (!is_foreign (self, i))
      return TRUE;
  return FALSE;
}

/* The first path, of those not found foreign, that takes `requests` (its
 * index in `taken`); the last failure otherwise. */
static int
connect_first (ReachdNetworkMonitor *self, const char *requests, gint *taken, GError **error)
{
  int fd = -1;
  for (gint i = 0; self->paths[i] != NULL && fd < 0; i++)
    {
      if (is_foreign (self, i))
        continue;
      g_clear_error (error);
      fd = reachd_connect_and_send (self->paths[i], requests, error);
      *taken = i;
    }
  if (fd < 0 && error != NULL && *error == NULL)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED,
                         "every reachd daemon found serves another network namespace");
  return fd;
}

/* Destroys a source this module attached, if there is one. */
static void
clear_source (GSource **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}

/* ---- Following the daemon ---- */

static void schedule_retry (ReachdNetworkMonitor *self);
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
  clear_source (&self->readable);
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
 * does not wait for that; the daemon's last state stands meanwhile). */
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
   * this answer), or GLib's backend never took over. */
  if (self->fallback == NULL)
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
  reachd_liveness_follow (self->liveness, self->paths[path]);
  self->followed = path;
  self->fd = fd;
  self->followed_since = g_get_monotonic_time ();
  self->first_pending = TRUE;
  self->readable = g_unix_fd_source_new (fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
  g_source_set_callback (self->readable, G_SOURCE_FUNC (on_subscription_readable), self, NULL);
  g_source_set_static_name (self->readable, "[reachd-gio] subscription");
  g_source_attach (self->readable, self->context);
}

/* The daemon is gone, or sent what reachd never sends: keep the state, try
 * again later. */
static void
lose (ReachdNetworkMonitor *self, const GError *error)
{
  g_debug ("reachd: %s; keeping the last state and reconnecting", error->message);
  if (g_get_monotonic_time () - self->followed_since >= STABLE_US)
    self->failures = 0;
  drop_subscription (self);
  reachd_liveness_follow (self->liveness, NULL);
  self->followed = -1;
  if (any_path_left (self))
    schedule_retry (self);
  else
    /* No daemon of this network to wait for: no timer, and GLib's backend,
     * which sees this network, answers. */
    enter_fallback (self);
}

/* Decodes every complete line; the newest status wins, and `reconfigured`
 * says whether any of them changed the configuration. Returns FALSE (with
 * `error`) when the daemon can't be followed. */
static gboolean
take_lines (ReachdLineBuffer *lines, ReachdHostState *newest, gboolean *have_status, gboolean *reconfigured,
            gboolean *handover, GError **error)
{
  gsize length;
  char *bytes;
  while ((bytes = reachd_line_buffer_take (lines, &length)) != NULL)
    {
      ReachdLine line;
      gboolean parsed = reachd_line_parse (bytes, length, &line, error);
      g_free (bytes);
      if (!parsed)
        return FALSE;
      if (line.type == REACHD_LINE_STATUS)
        {
          *newest = line.host;
          *have_status = TRUE;
          *reconfigured = *reconfigured || line.reconfigured;
          *handover = *handover || line.handover;
        }
      reachd_line_clear (&line);
    }
  return TRUE;
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
  gboolean open = reachd_read_available (fd, &self->lines, READ_PER_WAKEUP, &read_error);
  /* What came before the end, or before a bad line, still counts. */
  gboolean usable = take_lines (&self->lines, &newest, &have_status, &reconfigured, &handover, &line_error);
  if (have_status && self->first_pending)
    {
      self->first_pending = FALSE;
      if (!reachd_namespace_is_ours (&newest.network, fd))
        {
          g_autoptr (GError) other = g_error_new (G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED,
                                                  "the reachd daemon at %s serves another network namespace",
                                                  self->paths[self->followed]);
          mark_foreign (self, self->followed);
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

static const char *const SUBSCRIBE = "{\"op\":\"subscribe\",\"detail\":\"summary\"}\n";

static gboolean
on_retry (gpointer user_data)
{
  ReachdNetworkMonitor *self = user_data;
  g_clear_pointer (&self->retry, g_source_unref);
  g_autoptr (GError) error = NULL;
  gint path = -1;
  int fd = connect_first (self, SUBSCRIBE, &path, &error);
  if (fd < 0)
    {
      g_debug ("reachd: %s", error->message);
      /* A question from can_reach may have found the last path foreign. */
      if (any_path_left (self))
        schedule_retry (self);
      else
        enter_fallback (self);
      return G_SOURCE_REMOVE;
    }
  /* Its first status is compared with the state kept meanwhile. */
  follow (self, fd, path);
  return G_SOURCE_REMOVE;
}

/* At once the first time (under reachd.socket the connection restarts the
 * daemon), then after waits that double up to RETRY_MAX_MS. */
static void
schedule_retry (ReachdNetworkMonitor *self)
{
  guint delay = 0;
  if (self->failures > 0)
    delay = MIN (RETRY_MAX_MS, RETRY_FIRST_MS << MIN (self->failures - 1, 16u));
  self->failures++;
  self->retry = g_timeout_source_new (delay);
  g_source_set_callback (self->retry, on_retry, self, NULL);
  g_source_set_static_name (self->retry, "[reachd-gio] reconnect");
  g_source_attach (self->retry, self->context);
}

/* ---- GInitable ---- */

/* Subscribes on `path` and waits for the first status until `deadline`. */
static int
subscribe_now (const char *path, gint64 deadline, ReachdLineBuffer *lines, ReachdHostState *host, gboolean *foreign,
               GError **error)
{
  *foreign = FALSE;
  int fd = reachd_connect_and_send (path, SUBSCRIBE, error);
  if (fd < 0)
    return -1;
  gboolean have_status = FALSE;
  while (!have_status)
    {
      gint64 remaining = deadline - g_get_monotonic_time ();
      if (remaining <= 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "reachd on %s did not answer within %d ms", path,
                       (int) (INIT_DEADLINE_US / G_TIME_SPAN_MILLISECOND));
          break;
        }
      GPollFD poll_fd = { .fd = fd, .events = G_IO_IN | G_IO_HUP | G_IO_ERR };
      if (g_poll (&poll_fd, 1, (gint) ((remaining + 999) / 1000)) <= 0)
        continue;
      g_autoptr (GError) read_error = NULL;
      gboolean open = reachd_read_available (fd, lines, READ_PER_WAKEUP, &read_error);
      /* A refusal's error line says more than the end that follows it. The
       * first status is where the app starts: nothing to signal. */
      gboolean reconfigured = FALSE;
      gboolean handover = FALSE;
      if (!take_lines (lines, host, &have_status, &reconfigured, &handover, error))
        {
          have_status = FALSE;
          break;
        }
      /* A status and then the end, in one read or two, is a daemon that
       * answered and went away (a restart): the end is followed up like any
       * later one, so that how the bytes arrived decides nothing. */
      if (!open && !have_status)
        {
          g_propagate_error (error, g_steal_pointer (&read_error));
          break;
        }
    }
  if (have_status && !reachd_namespace_is_ours (&host->network, fd))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED, "the reachd daemon at %s serves another network namespace",
                   path);
      *foreign = TRUE;
      have_status = FALSE;
    }
  if (!have_status)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static gboolean
reachd_network_monitor_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (initable);
  (void) cancellable;
  gint64 deadline = g_get_monotonic_time () + INIT_DEADLINE_US;
  self->paths = socket_paths ();
  self->foreign = g_new0 (gint, g_strv_length (self->paths));
  g_autoptr (GString) failures = g_string_new (NULL);
  guint tried = 0, foreign = 0;
  for (gint path = 0; self->paths[path] != NULL; path++)
    {
      g_autoptr (GError) attempt = NULL;
      ReachdHostState host;
      gboolean other_network;
      int fd = subscribe_now (self->paths[path], deadline, &self->lines, &host, &other_network, &attempt);
      if (fd >= 0)
        {
          store (self, &host);
          self->daemon_state = host;
          self->context = g_main_context_ref_thread_default ();
          self->liveness = reachd_liveness_new (self->context, on_liveness, self);
          follow (self, fd, path);
          return TRUE;
        }
      tried++;
      if (other_network)
        {
          foreign++;
          self->foreign[path] = TRUE;
        }
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

/* A target as reachd reads one: HOST, HOST:PORT or [IPV6]:PORT; without a
 * port the daemon's default (443). */
static char *
target (const char *host, guint16 port)
{
  gboolean literal_ipv6 = strchr (host, ':') != NULL;
  if (port == 0)
    return g_strdup (host);
  return literal_ipv6 ? g_strdup_printf ("[%s]:%u", host, port) : g_strdup_printf ("%s:%u", host, port);
}

static GStrv
targets_of_service_targets (GList *srv_targets)
{
  GPtrArray *targets = g_ptr_array_new ();
  for (GList *each = srv_targets; each != NULL; each = each->next)
    g_ptr_array_add (targets, target (g_srv_target_get_hostname (each->data), g_srv_target_get_port (each->data)));
  g_ptr_array_add (targets, NULL);
  return (GStrv) g_ptr_array_free (targets, FALSE);
}

/* What the daemon is asked for a connectable that needs no lookup of its
 * own. NULL for a GNetworkService (`needs_srv`: its targets come from its
 * SRV records) and for one that is not on the network (a Unix socket). */
static GStrv
targets_of (GSocketConnectable *connectable, gboolean *needs_srv)
{
  *needs_srv = FALSE;
  char *only;
  if (G_IS_INET_SOCKET_ADDRESS (connectable))
    {
      GInetSocketAddress *address = G_INET_SOCKET_ADDRESS (connectable);
      g_autofree char *host = g_inet_address_to_string (g_inet_socket_address_get_address (address));
      only = target (host, g_inet_socket_address_get_port (address));
    }
  else if (G_IS_NETWORK_ADDRESS (connectable))
    {
      GNetworkAddress *address = G_NETWORK_ADDRESS (connectable);
      only = target (g_network_address_get_hostname (address), g_network_address_get_port (address));
    }
  else
    {
      *needs_srv = G_IS_NETWORK_SERVICE (connectable);
      return NULL;
    }
  char **targets = g_new0 (char *, 2);
  targets[0] = only;
  return targets;
}

/* One reach question, several targets, on a connection of its own, after a
 * `get` whose status says which network the daemon serves. */
typedef struct
{
  ReachdNetworkMonitor *monitor;
  GStrv targets;
  guint count;
  int fd;
  /* The path asked, an index into the monitor's. */
  gint path;
  /* The daemon's status said it serves the caller's network. */
  gboolean verified;
  ReachdLineBuffer lines;
  /* Each target's answer once it came (`target` set), by position. */
  ReachdLine *answers;
  guint answered;
  gboolean reachable;
  gboolean host_available;
  GError *failure;
} ReachQuery;

static void
reach_query_free (ReachQuery *query)
{
  for (guint i = 0; i < query->count; i++)
    reachd_line_clear (&query->answers[i]);
  g_free (query->answers);
  g_strfreev (query->targets);
  if (query->fd >= 0)
    close (query->fd);
  reachd_line_buffer_clear (&query->lines);
  g_clear_error (&query->failure);
  g_object_unref (query->monitor);
  g_free (query);
}

static ReachQuery *
reach_query_new (ReachdNetworkMonitor *monitor, GStrv targets, gboolean host_available)
{
  ReachQuery *query = g_new0 (ReachQuery, 1);
  query->monitor = g_object_ref (monitor);
  query->targets = targets;
  query->count = g_strv_length (targets);
  query->fd = -1;
  query->answers = g_new0 (ReachdLine, query->count);
  query->host_available = host_available;
  reachd_line_buffer_init (&query->lines);
  return query;
}

static void
append_reach_request (GString *requests, const char *destination, guint id)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  g_autofree char *id_text = g_strdup_printf ("%u", id);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "op");
  json_builder_add_string_value (builder, "reach");
  json_builder_set_member_name (builder, "id");
  json_builder_add_string_value (builder, id_text);
  json_builder_set_member_name (builder, "target");
  json_builder_add_string_value (builder, destination);
  json_builder_end_object (builder);
  g_autoptr (JsonNode) root = json_builder_get_root (builder);
  g_autofree char *json = json_to_string (root, FALSE);
  g_string_append_printf (requests, "%s\n", json);
}

/* Connects and sends a `get`, then every question, tagged with its position. */
static gboolean
reach_query_start (ReachQuery *query, GError **error)
{
  g_autoptr (GString) requests = g_string_new ("{\"op\":\"get\",\"detail\":\"summary\"}\n");
  for (guint i = 0; i < query->count; i++)
    append_reach_request (requests, query->targets[i], i);
  query->fd = connect_first (query->monitor, requests->str, &query->path, error);
  return query->fd >= 0;
}

static gboolean
reach_query_done (ReachQuery *query)
{
  return query->reachable || query->failure != NULL || query->answered == query->count;
}

/* Reads the answers there are. */
static void
reach_query_read (ReachQuery *query)
{
  g_autoptr (GError) error = NULL;
  gboolean open = reachd_read_available (query->fd, &query->lines, READ_PER_WAKEUP, &error);
  gsize length;
  char *bytes;
  while (!reach_query_done (query) && (bytes = reachd_line_buffer_take (&query->lines, &length)) != NULL)
    {
      ReachdLine line;
      gboolean parsed = reachd_line_parse (bytes, length, &line, &query->failure);
      g_free (bytes);
      if (!parsed)
        return;
      if (!query->verified)
        {
          /* The answer to the `get` comes first: nothing counts before it
           * says the daemon serves this network. */
          gboolean ours = line.type == REACHD_LINE_STATUS && reachd_namespace_is_ours (&line.host.network, query->fd);
          reachd_line_clear (&line);
          if (!ours)
            {
              mark_foreign (query->monitor, query->path);
              query->failure = g_error_new (G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED,
                                            "the reachd daemon at %s serves another network namespace",
                                            query->monitor->paths[query->path]);
              return;
            }
          query->verified = TRUE;
          continue;
        }
      guint64 id;
      if (line.type == REACHD_LINE_DESTINATION && line.id != NULL
          && g_ascii_string_to_unsigned (line.id, 10, 0, query->count - 1, &id, NULL)
          && query->answers[id].target == NULL)
        {
          query->reachable = query->reachable || line.state == REACHD_DESTINATION_REACHABLE;
          query->answers[id] = line;
          if (query->answers[id].target == NULL)
            query->answers[id].target = g_strdup (query->targets[id]);
          query->answered++;
        }
      else
        reachd_line_clear (&line);
    }
  if (!open && !reach_query_done (query))
    query->failure = g_steal_pointer (&error);
}

/* TRUE, or the most telling error: the first target's answer. */
static gboolean
reach_query_result (ReachQuery *query, GError **error)
{
  if (query->reachable)
    return TRUE;
  if (query->failure != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&query->failure));
      return FALSE;
    }
  for (guint i = 0; i < query->count; i++)
    if (query->answers[i].target != NULL)
      {
        g_propagate_error (error, reachd_destination_error (&query->answers[i], query->host_available));
        return FALSE;
      }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "reachd gave no answer for %s within %d s", query->targets[0],
               (int) (REACH_DEADLINE_US / G_TIME_SPAN_SECOND));
  return FALSE;
}

/* What both forms do first: a query sent to the daemon, or NULL with the
 * answer in `answer` and `error`. No target (a service without records)
 * is reachable; with no daemon to ask (it went away after init), the
 * host's state answers, as GLib's base monitor does. Takes `targets`. */
static ReachQuery *
reach_begin (ReachdNetworkMonitor *self, GStrv targets, gboolean *answer, GError **error)
{
  *answer = TRUE;
  if (targets == NULL)
    return NULL;
  ReachQuery *query = reach_query_new (self, targets, g_atomic_int_get (&self->available));
  g_autoptr (GError) unavailable = NULL;
  if (reach_query_start (query, &unavailable))
    return query;
  reach_query_free (query);
  *answer = g_atomic_int_get (&self->available);
  if (!*answer)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "the network is unreachable");
  return NULL;
}

/* GLib's backend answered for the daemon that does not. */
static void
on_fallback_reached (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  GError *error = NULL;
  (void) source;
  if (reachd_fallback_can_reach_finish (result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
  g_object_unref (task);
}

/* Asks GLib's backend, when it runs, and waits for its answer; `asked`
 * FALSE when it does not run (yet): the daemon is asked. */
static gboolean
fallback_can_reach (ReachdNetworkMonitor *self, GSocketConnectable *connectable, GCancellable *cancellable,
                    gboolean *asked, GError **error)
{
  ReachdFallback *fallback = ref_fallback (self);
  *asked = FALSE;
  if (fallback == NULL)
    return FALSE;
  /* can_reach is synchronous: the answer is awaited in a context of its
   * own, which nothing else of the app's runs in. */
  g_autoptr (GMainContext) context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  g_autoptr (GTask) answer = g_task_new (NULL, cancellable, NULL, NULL);
  *asked = reachd_fallback_can_reach_async (fallback, connectable, cancellable, on_fallback_reached, g_object_ref (answer));
  if (!*asked)
    g_object_unref (answer);
  while (*asked && !g_task_get_completed (answer))
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  reachd_fallback_unref (fallback);
  return *asked && g_task_propagate_boolean (answer, error);
}

static gboolean
reachd_network_monitor_can_reach (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                  GCancellable *cancellable, GError **error)
{
  ReachdNetworkMonitor *self = REACHD_NETWORK_MONITOR (monitor);
  /* The daemon would not answer: GLib's backend does, as for the state. */
  gboolean asked;
  gboolean through_glib = fallback_can_reach (self, connectable, cancellable, &asked, error);
  if (asked)
    return through_glib;
  gboolean needs_srv;
  GStrv targets = targets_of (connectable, &needs_srv);
  if (needs_srv)
    {
      GNetworkService *service = G_NETWORK_SERVICE (connectable);
      g_autoptr (GResolver) resolver = g_resolver_get_default ();
      GList *srv = g_resolver_lookup_service (resolver, g_network_service_get_service (service),
                                              g_network_service_get_protocol (service),
                                              g_network_service_get_domain (service), cancellable, error);
      if (srv == NULL)
        return FALSE;
      targets = targets_of_service_targets (srv);
      g_resolver_free_targets (srv);
    }
  gboolean answer;
  ReachQuery *query = reach_begin (self, targets, &answer, error);
  if (query == NULL)
    return answer;
  gint64 deadline = g_get_monotonic_time () + REACH_DEADLINE_US;
  GPollFD fds[2] = { { .fd = query->fd, .events = G_IO_IN | G_IO_HUP | G_IO_ERR } };
  gboolean cancellable_fd = g_cancellable_make_pollfd (cancellable, &fds[1]);
  while (!reach_query_done (query))
    {
      gint64 remaining = deadline - g_get_monotonic_time ();
      if (remaining <= 0 || g_cancellable_is_cancelled (cancellable))
        break;
      if (g_poll (fds, cancellable_fd ? 2 : 1, (gint) ((remaining + 999) / 1000)) > 0 && fds[0].revents != 0)
        reach_query_read (query);
    }
  if (cancellable_fd)
    g_cancellable_release_fd (cancellable);
  gboolean reachable = FALSE;
  if (!g_cancellable_set_error_if_cancelled (cancellable, error))
    reachable = reach_query_result (query, error);
  reach_query_free (query);
  return reachable;
}

/* ---- can_reach_async ---- */

typedef struct
{
  ReachQuery *query;
  GSource *readable;
  GSource *timeout;
  GSource *cancelled;
} AsyncReach;

static void
async_reach_stop (AsyncReach *reach)
{
  clear_source (&reach->readable);
  clear_source (&reach->timeout);
  clear_source (&reach->cancelled);
}

static void
async_reach_free (AsyncReach *reach)
{
  async_reach_stop (reach);
  reach_query_free (reach->query);
  g_free (reach);
}

static void
async_reach_finish (GTask *task)
{
  AsyncReach *reach = g_task_get_task_data (task);
  /* GTask may call back in a later iteration: nothing may fire meanwhile. */
  async_reach_stop (reach);
  GError *error = NULL;
  if (g_cancellable_set_error_if_cancelled (g_task_get_cancellable (task), &error))
    g_task_return_error (task, error);
  else if (reach_query_result (reach->query, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
  g_object_unref (task);
}

static gboolean
on_reach_readable (int fd, GIOCondition condition, gpointer user_data)
{
  GTask *task = user_data;
  AsyncReach *reach = g_task_get_task_data (task);
  (void) fd;
  (void) condition;
  reach_query_read (reach->query);
  if (!reach_query_done (reach->query))
    return G_SOURCE_CONTINUE;
  async_reach_finish (task);
  return G_SOURCE_REMOVE;
}

static gboolean
on_reach_over (gpointer user_data)
{
  async_reach_finish (user_data);
  return G_SOURCE_REMOVE;
}

static gboolean
on_reach_cancelled (GCancellable *cancellable, gpointer user_data)
{
  (void) cancellable;
  async_reach_finish (user_data);
  return G_SOURCE_REMOVE;
}

/* Asks the daemon without blocking: the answers are read on the task's
 * main context. Takes `task`. */
static void
async_reach_start (GTask *task, GStrv targets)
{
  ReachdNetworkMonitor *self = g_task_get_source_object (task);
  gboolean answer;
  GError *error = NULL;
  ReachQuery *query = reach_begin (self, targets, &answer, &error);
  if (query == NULL)
    {
      if (answer)
        g_task_return_boolean (task, TRUE);
      else
        g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  AsyncReach *reach = g_new0 (AsyncReach, 1);
  reach->query = query;
  g_task_set_task_data (task, reach, (GDestroyNotify) async_reach_free);
  GMainContext *context = g_task_get_context (task);
  reach->readable = g_unix_fd_source_new (reach->query->fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
  g_source_set_callback (reach->readable, G_SOURCE_FUNC (on_reach_readable), task, NULL);
  g_source_attach (reach->readable, context);
  reach->timeout = g_timeout_source_new ((guint) (REACH_DEADLINE_US / G_TIME_SPAN_MILLISECOND));
  g_source_set_callback (reach->timeout, on_reach_over, task, NULL);
  g_source_attach (reach->timeout, context);
  GCancellable *cancellable = g_task_get_cancellable (task);
  if (cancellable != NULL)
    {
      reach->cancelled = g_cancellable_source_new (cancellable);
      g_source_set_callback (reach->cancelled, G_SOURCE_FUNC (on_reach_cancelled), task, NULL);
      g_source_attach (reach->cancelled, context);
    }
}

static void
on_service_resolved (GObject *resolver, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  GError *error = NULL;
  GList *srv = g_resolver_lookup_service_finish (G_RESOLVER (resolver), result, &error);
  if (srv == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  GStrv targets = targets_of_service_targets (srv);
  g_resolver_free_targets (srv);
  async_reach_start (task, targets);
}

static void
reachd_network_monitor_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                        GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (monitor, cancellable, callback, user_data);
  g_task_set_source_tag (task, reachd_network_monitor_can_reach_async);
  ReachdFallback *fallback = ref_fallback (REACHD_NETWORK_MONITOR (monitor));
  gboolean asked = fallback != NULL
                   && reachd_fallback_can_reach_async (fallback, connectable, cancellable, on_fallback_reached, task);
  if (fallback != NULL)
    reachd_fallback_unref (fallback);
  if (asked)
    return;
  gboolean needs_srv;
  GStrv targets = targets_of (connectable, &needs_srv);
  if (!needs_srv)
    {
      async_reach_start (task, targets);
      return;
    }
  GNetworkService *service = G_NETWORK_SERVICE (connectable);
  g_autoptr (GResolver) resolver = g_resolver_get_default ();
  g_resolver_lookup_service_async (resolver, g_network_service_get_service (service),
                                   g_network_service_get_protocol (service), g_network_service_get_domain (service),
                                   cancellable, on_service_resolved, task);
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
  clear_source (&self->retry);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_strfreev (self->paths);
  g_free (self->foreign);
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
