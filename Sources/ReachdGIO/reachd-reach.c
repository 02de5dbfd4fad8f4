/* can_reach from the daemon's per-destination lookup: see reachd-reach.h. */
#include "reachd-reach.h"
#include "reachd-daemon-line.h"
#include "reachd-daemon-socket.h"

#include <json-glib/json-glib.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>

/* As reachd's own clients: a second for the daemon, six for a name. */
#define REACH_DEADLINE_US (7 * G_TIME_SPAN_SECOND)

/* ---- The query ---- */

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

/* The targets of `service`'s SRV records as the resolver gave them (and
 * `lookup_error`, what it said), or NULL and an error. RFC 2782's "no such
 * service here" (the target ".") comes as no target at all, with no error
 * (GLib drops a lone "." and says nothing), or as a target named "" or
 * ".": none is a server, and the answer is not-found, as GLib's own monitor
 * answers when the name "" does not resolve. Takes `srv` and
 * `lookup_error`. */
static GStrv
service_targets (GNetworkService *service, GList *srv, GError *lookup_error, GError **error)
{
  if (lookup_error != NULL)
    {
      g_propagate_error (error, lookup_error);
      return NULL;
    }
  GPtrArray *targets = g_ptr_array_new ();
  for (GList *each = srv; each != NULL; each = each->next)
    {
      const char *hostname = g_srv_target_get_hostname (each->data);
      if (hostname[0] != '\0' && g_strcmp0 (hostname, ".") != 0)
        g_ptr_array_add (targets, target (hostname, g_srv_target_get_port (each->data)));
    }
  g_resolver_free_targets (srv);
  if (targets->len == 0)
    {
      g_ptr_array_free (targets, TRUE);
      g_set_error (error, G_RESOLVER_ERROR, G_RESOLVER_ERROR_NOT_FOUND,
                   "no %s service over %s at %s: its SRV record says none is offered", g_network_service_get_service (service),
                   g_network_service_get_protocol (service), g_network_service_get_domain (service));
      return NULL;
    }
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
  /* Held as long as the query, and with it `paths`, which are its. */
  GNetworkMonitor *monitor;
  ReachdDaemonPaths *paths;
  GStrv targets;
  guint count;
  int fd;
  /* The path asked, an index into `paths`. */
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
reach_query_new (GNetworkMonitor *monitor, ReachdDaemonPaths *paths, GStrv targets, gboolean host_available)
{
  ReachQuery *query = g_new0 (ReachQuery, 1);
  query->monitor = g_object_ref (monitor);
  query->paths = paths;
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
  g_autoptr (GString) requests = g_string_new (REACHD_GET_SUMMARY);
  for (guint i = 0; i < query->count; i++)
    append_reach_request (requests, query->targets[i], i);
  query->fd = reachd_daemon_paths_connect_first (query->paths, requests->str, &query->path, NULL, error);
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
  gboolean open = reachd_read_available (query->fd, &query->lines, REACHD_READ_PER_WAKEUP, &error);
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
           * says the daemon serves this network. Any other line before it
           * (a newer daemon's, of a kind this version does not know) is no
           * answer, and no sign of another network: the status decides. */
          if (line.type != REACHD_LINE_STATUS)
            {
              reachd_line_clear (&line);
              continue;
            }
          query->failure = reachd_daemon_paths_check_ours (query->paths, query->path, &line.host.network, query->fd);
          reachd_line_clear (&line);
          if (query->failure != NULL)
            return;
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
reach_begin (GNetworkMonitor *self, ReachdDaemonPaths *paths, GStrv targets, gboolean *answer, GError **error)
{
  *answer = TRUE;
  if (targets == NULL)
    return NULL;
  ReachQuery *query = reach_query_new (self, paths, targets, g_network_monitor_get_network_available (self));
  g_autoptr (GError) unavailable = NULL;
  if (reach_query_start (query, &unavailable))
    return query;
  reach_query_free (query);
  *answer = g_network_monitor_get_network_available (self);
  if (!*answer)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "the network is unreachable");
  return NULL;
}

/* ---- can_reach ---- */

gboolean
reachd_reach_sync (GNetworkMonitor *self, ReachdDaemonPaths *paths, GSocketConnectable *connectable,
                   GCancellable *cancellable, GError **error)
{
  gboolean needs_srv;
  GStrv targets = targets_of (connectable, &needs_srv);
  if (needs_srv)
    {
      GNetworkService *service = G_NETWORK_SERVICE (connectable);
      g_autoptr (GResolver) resolver = g_resolver_get_default ();
      GError *lookup_error = NULL;
      GList *srv = g_resolver_lookup_service (resolver, g_network_service_get_service (service),
                                              g_network_service_get_protocol (service),
                                              g_network_service_get_domain (service), cancellable, &lookup_error);
      targets = service_targets (service, srv, lookup_error, error);
      if (targets == NULL)
        return FALSE;
    }
  gboolean answer;
  ReachQuery *query = reach_begin (self, paths, targets, &answer, error);
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
  /* The daemons to ask: the monitor's, which the task holds as its source
   * object. */
  ReachdDaemonPaths *paths;
  /* A service whose targets are looked up first; NULL otherwise. */
  GNetworkService *service;
  /* Once asked. */
  ReachQuery *query;
  GSource *readable;
  GSource *timeout;
  GSource *cancelled;
} AsyncReach;

static void
async_reach_stop (AsyncReach *reach)
{
  reachd_clear_source (&reach->readable);
  reachd_clear_source (&reach->timeout);
  reachd_clear_source (&reach->cancelled);
}

static void
async_reach_free (AsyncReach *reach)
{
  async_reach_stop (reach);
  g_clear_pointer (&reach->query, reach_query_free);
  g_clear_object (&reach->service);
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
  GNetworkMonitor *self = g_task_get_source_object (task);
  AsyncReach *reach = g_task_get_task_data (task);
  gboolean answer;
  GError *error = NULL;
  reach->query = reach_begin (self, reach->paths, targets, &answer, &error);
  if (reach->query == NULL)
    {
      if (answer)
        g_task_return_boolean (task, TRUE);
      else
        g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  GMainContext *context = g_task_get_context (task);
  reach->readable = reachd_attach_source (g_unix_fd_source_new (reach->query->fd, G_IO_IN | G_IO_HUP | G_IO_ERR),
                                          G_SOURCE_FUNC (on_reach_readable), task, "[reachd-gio] reach answer", context);
  reach->timeout = reachd_attach_source (g_timeout_source_new ((guint) (REACH_DEADLINE_US / G_TIME_SPAN_MILLISECOND)),
                                         on_reach_over, task, "[reachd-gio] reach deadline", context);
  GCancellable *cancellable = g_task_get_cancellable (task);
  if (cancellable != NULL)
    reach->cancelled = reachd_attach_source (g_cancellable_source_new (cancellable), G_SOURCE_FUNC (on_reach_cancelled),
                                             task, "[reachd-gio] reach cancelled", context);
}

static void
on_service_resolved (GObject *resolver, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  GError *lookup_error = NULL;
  GList *srv = g_resolver_lookup_service_finish (G_RESOLVER (resolver), result, &lookup_error);
  GError *error = NULL;
  AsyncReach *reach = g_task_get_task_data (task);
  GStrv targets = service_targets (reach->service, srv, lookup_error, &error);
  if (targets == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  async_reach_start (task, targets);
}

void
reachd_reach_async (GTask *task, ReachdDaemonPaths *paths, GSocketConnectable *connectable)
{
  AsyncReach *reach = g_new0 (AsyncReach, 1);
  reach->paths = paths;
  g_task_set_task_data (task, reach, (GDestroyNotify) async_reach_free);
  GCancellable *cancellable = g_task_get_cancellable (task);
  gboolean needs_srv;
  GStrv targets = targets_of (connectable, &needs_srv);
  if (!needs_srv)
    {
      async_reach_start (task, targets);
      return;
    }
  GNetworkService *service = G_NETWORK_SERVICE (connectable);
  reach->service = g_object_ref (service);
  g_autoptr (GResolver) resolver = g_resolver_get_default ();
  g_resolver_lookup_service_async (resolver, g_network_service_get_service (service),
                                   g_network_service_get_protocol (service), g_network_service_get_domain (service),
                                   cancellable, on_service_resolved, task);
}
