/* Reading reachd's lines: see reachd-daemon-line.h. */
#include "reachd-daemon-line.h"

#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

void
reachd_line_clear (ReachdLine *line)
{
  g_clear_pointer (&line->id, g_free);
  g_clear_pointer (&line->target, g_free);
  g_clear_pointer (&line->reason, g_free);
}

/* A member holding a value of `type`, or NULL when it is missing or of
 * another type: a daemon's bytes are checked, never assumed (json-glib's
 * getters warn on a wrong type, and a warning may be fatal in the host
 * program). */
static JsonNode *
value_member (JsonObject *object, const char *name, GType type)
{
  JsonNode *node = json_object_get_member (object, name);
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != type)
    return NULL;
  return node;
}

static const char *
string_member (JsonObject *object, const char *name)
{
  JsonNode *node = value_member (object, name, G_TYPE_STRING);
  return node != NULL ? json_node_get_string (node) : NULL;
}

static gboolean
boolean_member (JsonObject *object, const char *name)
{
  JsonNode *node = value_member (object, name, G_TYPE_BOOLEAN);
  return node != NULL && json_node_get_boolean (node);
}

static gint64
integer_member (JsonObject *object, const char *name, gint64 missing)
{
  JsonNode *node = value_member (object, name, G_TYPE_INT64);
  return node != NULL ? json_node_get_int (node) : missing;
}

static void
parse_namespace (JsonObject *object, ReachdNamespace *network)
{
  JsonNode *node = json_object_get_member (object, "netns");
  memset (network, 0, sizeof *network);
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return;
  JsonObject *netns = json_node_get_object (node);
  gint64 inode = integer_member (netns, "inode", -1);
  gint64 device = integer_member (netns, "device", -1);
  if (inode < 0 || device < 0)
    return;
  network->known = TRUE;
  network->inode = (guint64) inode;
  network->device = (guint64) device;
  network->cookie = (guint64) MAX (integer_member (netns, "cookie", 0), 0);
}

/* SO_NETNS_COOKIE (Linux 5.14), which older headers lack. */
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* A status that names no namespace (a daemon before 0.7, or one that is
 * not reachd), or none that reads, proves nothing: not ours. */
gboolean
reachd_namespace_is_ours (const ReachdNamespace *network, int fd)
{
  if (!network->known)
    return FALSE;
  /* The cookies decide where both have one: never used again for another
   * namespace, and readable without /proc. */
  guint64 cookie = 0;
  socklen_t length = sizeof cookie;
  if (network->cookie != 0 && getsockopt (fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &length) == 0)
    return cookie == network->cookie;
  /* The thread's own: a thread may have joined another namespace. Without
   * /proc, the cookie alone could have told; with no cookie either, the
   * daemon is trusted, for nothing here can say otherwise. */
  struct stat ours;
  if (stat ("/proc/thread-self/ns/net", &ours) != 0 && stat ("/proc/self/ns/net", &ours) != 0)
    return TRUE;
  return (guint64) ours.st_ino == network->inode && (guint64) ours.st_dev == network->device;
}

static gboolean
is_one_of (const char *word, const char *const *words)
{
  return word != NULL && g_strv_contains (words, word);
}

/* Whether the status says names cannot resolve: `dns.state` failing (names
 * fail while the check's server answers) or unroutable (no name server has
 * a route). GLib's monitor has no word for names, and an app can reach
 * almost nothing without them: GLib's NetworkManager backend says LIMITED
 * here (NetworkManager's check resolves its host first), so the module
 * does too, where it would say FULL. `none` is left out (glibc then asks
 * a resolver on the host itself), and so are values this module has not
 * seen: `online`, which they do not enter, stands. */
static gboolean
names_fail (JsonObject *object)
{
  static const char *const failing[] = { "failing", "unroutable", NULL };
  JsonNode *node = json_object_get_member (object, "dns");
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node)
         && is_one_of (string_member (json_node_get_object (node), "state"), failing);
}

/* reachd's verdict in GLib's words. Connectivity "unknown" means no check
 * runs (or the first of a new path is under way): routes decide, as they
 * do for GLib's own backends. Where a newer daemon sends a level or a
 * verdict this module has never seen, the daemon's own word stands, as in
 * the Swift library (NetworkStatus.online and .reachability): its
 * "reachability" when it is a level this module knows, and its "online",
 * which also says a family is online by routes. Without them, what cannot
 * be judged is not online (docs/PROTOCOL.md, unknown values). */
static void
parse_status (JsonObject *object, ReachdHostState *host)
{
  static const char *const levels[] = { "offline", "local", "online", NULL };
  static const char *const verdicts[] = { "unknown", "none", "portal", "limited", "full", NULL };
  const char *ipv4 = string_member (object, "ipv4");
  const char *ipv6 = string_member (object, "ipv6");
  const char *reachability = string_member (object, "reachability");
  const char *connectivity = string_member (object, "connectivity");
  JsonNode *online_node = value_member (object, "online", G_TYPE_BOOLEAN);
  gboolean said = online_node != NULL;
  gboolean online = said && json_node_get_boolean (online_node);
  gboolean levels_known = is_one_of (ipv4, levels) && is_one_of (ipv6, levels);
  gboolean verdict_known = is_one_of (connectivity, verdicts);
  if (!levels_known && is_one_of (reachability, levels))
    host->available = g_strcmp0 (reachability, "online") == 0;
  else
    host->available = g_strcmp0 (ipv4, "online") == 0 || g_strcmp0 (ipv6, "online") == 0 || (!levels_known && online);
  host->metered = boolean_member (object, "metered");
  if (!verdict_known)
    connectivity = online ? "full" : "limited";
  gboolean daemons_word = (!levels_known || !verdict_known) && said;
  host->online = daemons_word ? online
                              : host->available && (g_strcmp0 (connectivity, "full") == 0
                                                    || g_strcmp0 (connectivity, "unknown") == 0);
  if (daemons_word)
    {
      /* The daemon judged what this module can't: online is full access by
       * a family online by routes, and not online is never full. */
      if (online)
        {
          host->available = TRUE;
          connectivity = "full";
        }
      else if (g_strcmp0 (connectivity, "full") == 0 || g_strcmp0 (connectivity, "unknown") == 0)
        connectivity = "limited";
    }
  if (!host->available || g_strcmp0 (connectivity, "none") == 0)
    host->connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
  else if (g_strcmp0 (connectivity, "portal") == 0)
    host->connectivity = G_NETWORK_CONNECTIVITY_PORTAL;
  else if (g_strcmp0 (connectivity, "limited") == 0 || names_fail (object))
    host->connectivity = G_NETWORK_CONNECTIVITY_LIMITED;
  else
    host->connectivity = G_NETWORK_CONNECTIVITY_FULL;
  parse_namespace (object, &host->network);
}

/* Reads a status's `changes` (docs/PROTOCOL.md, Changes): whether they
 * hold a path change, which GLib calls a change of the network's
 * configuration although its three properties may stay (as
 * StatusChange.changesConfiguration in the Swift library), and whether it
 * is a handover. Every other kind signals only where it moves one of the
 * three properties, which the monitor compares: a new path's check
 * answering `full` after the handover's `unknown` is FULL both times for
 * GLib, and signals nothing more. Kinds this module does not know, and
 * entries it cannot read, are ignored. */
static void
parse_changes (JsonObject *object, ReachdLine *line)
{
  JsonNode *node = json_object_get_member (object, "changes");
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return;
  JsonArray *changes = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (changes); i++)
    {
      JsonNode *change = json_array_get_element (changes, i);
      if (!JSON_NODE_HOLDS_OBJECT (change))
        continue;
      JsonObject *entry = json_node_get_object (change);
      if (g_strcmp0 (string_member (entry, "kind"), "path") != 0)
        continue;
      JsonNode *from = json_object_get_member (entry, "from");
      JsonNode *to = json_object_get_member (entry, "to");
      line->reconfigured = TRUE;
      if (from != NULL && JSON_NODE_HOLDS_OBJECT (from) && to != NULL && JSON_NODE_HOLDS_OBJECT (to))
        line->handover = TRUE;
    }
}

static ReachdDestinationState
destination_state (const char *state)
{
  if (g_strcmp0 (state, "reachable") == 0)
    return REACHD_DESTINATION_REACHABLE;
  if (g_strcmp0 (state, "unreachable") == 0)
    return REACHD_DESTINATION_UNREACHABLE;
  if (g_strcmp0 (state, "unresolved") == 0)
    return REACHD_DESTINATION_UNRESOLVED;
  return REACHD_DESTINATION_UNDECIDED;
}

gboolean
reachd_line_parse (const char *bytes, gsize length, ReachdLine *line, GError **error)
{
  memset (line, 0, sizeof *line);
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  g_autoptr (GError) parse_error = NULL;
  if (!json_parser_load_from_data (parser, bytes, (gssize) length, &parse_error))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reachd sent a line that is not JSON: %s",
                   parse_error->message);
      return FALSE;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reachd sent a line that is not a JSON object");
      return FALSE;
    }
  JsonObject *object = json_node_get_object (root);
  JsonNode *version_node = value_member (object, "version", G_TYPE_INT64);
  const char *type = string_member (object, "type");
  /* Every daemon line says both (docs/PROTOCOL.md); one that does not is
   * not reachd's, whatever else it holds (Tests/ClientSpec). Any number is
   * a version, if not this one. */
  if (version_node == NULL || type == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "reachd sent a line without its type or protocol version");
      return FALSE;
    }
  gint64 version = json_node_get_int (version_node);
  if (version != REACHD_PROTOCOL_VERSION)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "reachd speaks protocol version %" G_GINT64_FORMAT ", this GIO module version %d: "
                   "install matching versions of reachd and reachd-gio",
                   version, REACHD_PROTOCOL_VERSION);
      return FALSE;
    }
  if (g_strcmp0 (type, "error") == 0)
    {
      const char *code = string_member (object, "code");
      const char *message = string_member (object, "message");
      /* Both from outside, and logged: escaped. */
      g_autofree char *printable_code = g_strescape (code != NULL ? code : "unknown", NULL);
      g_autofree char *printable = g_strescape (message != NULL ? message : "", NULL);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "reachd refused: %s: %s", printable_code, printable);
      return FALSE;
    }
  /* A status or an answer without what this module reads from it would be
   * read as offline or unanswered: the Swift library fails the daemon on
   * it, and so does this module (Tests/ClientSpec). */
  if ((g_strcmp0 (type, "status") == 0
       && (string_member (object, "ipv4") == NULL || string_member (object, "ipv6") == NULL
           || string_member (object, "connectivity") == NULL))
      || (g_strcmp0 (type, "destination") == 0
          && (string_member (object, "state") == NULL || string_member (object, "target") == NULL)))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reachd sent a %s line without its state", type);
      return FALSE;
    }
  if (g_strcmp0 (type, "status") == 0)
    {
      line->type = REACHD_LINE_STATUS;
      parse_status (object, &line->host);
      parse_changes (object, line);
      return TRUE;
    }
  if (g_strcmp0 (type, "destination") == 0)
    {
      line->type = REACHD_LINE_DESTINATION;
      line->state = destination_state (string_member (object, "state"));
      line->id = g_strdup (string_member (object, "id"));
      line->target = g_strdup (string_member (object, "target"));
      line->reason = g_strdup (string_member (object, "reason"));
      return TRUE;
    }
  line->type = REACHD_LINE_OTHER;
  return TRUE;
}

void
reachd_line_buffer_init (ReachdLineBuffer *buffer)
{
  buffer->pending = g_byte_array_new ();
  buffer->line_start = 0;
  buffer->received = 0;
}

void
reachd_line_buffer_clear (ReachdLineBuffer *buffer)
{
  g_clear_pointer (&buffer->pending, g_byte_array_unref);
}

void
reachd_line_buffer_reset (ReachdLineBuffer *buffer)
{
  g_byte_array_set_size (buffer->pending, 0);
  buffer->line_start = 0;
  buffer->received = 0;
}

gboolean
reachd_line_buffer_append (ReachdLineBuffer *buffer, const guint8 *bytes, gsize length, GError **error)
{
  g_byte_array_append (buffer->pending, bytes, (guint) length);
  buffer->received += length;
  /* Each line is measured once, as its bytes arrive: only the new ones are
   * read. An over-long line is dropped with what follows it, so that the
   * lines before it can still be taken and it never can. */
  const guint8 *data = buffer->pending->data;
  gsize end = buffer->pending->len;
  for (const guint8 *newline = data + end - length;
       (newline = memchr (newline, '\n', (gsize) (data + end - newline))) != NULL; newline++)
    {
      if ((gsize) (newline - data) - buffer->line_start > REACHD_MAX_LINE)
        break;
      buffer->line_start = (gsize) (newline - data) + 1;
    }
  if (buffer->pending->len - buffer->line_start > REACHD_MAX_LINE)
    {
      g_byte_array_set_size (buffer->pending, (guint) buffer->line_start);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                   "reachd sent a line of more than %d bytes: it is not reachd, or it is broken", REACHD_MAX_LINE);
      return FALSE;
    }
  return TRUE;
}

char *
reachd_line_buffer_take (ReachdLineBuffer *buffer, gsize *length)
{
  const guint8 *newline = memchr (buffer->pending->data, '\n', buffer->pending->len);
  if (newline == NULL)
    return NULL;
  gsize line_length = (gsize) (newline - buffer->pending->data);
  char *line = g_strndup ((const char *) buffer->pending->data, line_length);
  g_byte_array_remove_range (buffer->pending, 0, (guint) line_length + 1);
  buffer->line_start -= line_length + 1;
  *length = line_length;
  return line;
}

/* Decodes every complete line; the newest status wins, and `reconfigured`
 * says whether any of them changed the configuration. Returns FALSE (with
 * `error`) when the daemon can't be followed. */
gboolean
reachd_line_buffer_take_statuses (ReachdLineBuffer *lines, ReachdHostState *newest, gboolean *have_status,
                                  gboolean *reconfigured, gboolean *handover, GError **error)
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

GError *
reachd_destination_error (const ReachdLine *line, gboolean host_available)
{
  const char *target = line->target != NULL ? line->target : "the destination";
  const char *reason = line->reason != NULL ? line->reason : "unknown";
  g_autofree char *printable_target = g_strescape (target, NULL);
  g_autofree char *printable_reason = g_strescape (reason, NULL);
  switch (line->state)
    {
    case REACHD_DESTINATION_UNRESOLVED:
      if (g_strcmp0 (reason, "nxdomain") == 0 || g_strcmp0 (reason, "no_address") == 0)
        return g_error_new (G_RESOLVER_ERROR, G_RESOLVER_ERROR_NOT_FOUND, "%s did not resolve: %s", printable_target,
                            printable_reason);
      return g_error_new (G_RESOLVER_ERROR, G_RESOLVER_ERROR_TEMPORARY_FAILURE, "%s did not resolve: %s",
                          printable_target, printable_reason);
    case REACHD_DESTINATION_UNREACHABLE:
      if (!host_available && g_strcmp0 (reason, "no_route") == 0)
        return g_error_new (G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "%s is unreachable: no route (the network is down)",
                            printable_target);
      return g_error_new (G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE, "%s is unreachable: %s", printable_target,
                          printable_reason);
    case REACHD_DESTINATION_UNDECIDED:
      return g_error_new (G_RESOLVER_ERROR, G_RESOLVER_ERROR_TEMPORARY_FAILURE, "%s: reachd has no answer yet (%s)",
                          printable_target, printable_reason);
    case REACHD_DESTINATION_REACHABLE:
      break;
    }
  return g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED, "%s is reachable", printable_target);
}
