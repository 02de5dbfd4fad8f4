/* The client spec (Tests/ClientSpec) run over the GIO module's reading of
 * daemon lines and its constants: the C half of what ClientSpecTests.swift
 * holds the Swift library to.
 *
 *   spec-driver status-lines.json constants.json
 *   spec-driver --seeds DIRECTORY status-lines.json
 *
 * Prints one line per disagreement and exits 1 if there is any. With
 * --seeds it writes each case's line, as it is read here, to a file of its
 * own in DIRECTORY instead: the seeds of the module's fuzz target
 * (Fuzz/run.sh). */
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "reachd-daemon-line.h"
#include "reachd-liveness.h"
#include "reachd-network-monitor.h"

static int disagreements;

static void G_GNUC_PRINTF (2, 3)
disagree (const char *name, const char *format, ...)
{
  va_list arguments;
  va_start (arguments, format);
  g_autofree char *text = g_strdup_vprintf (format, arguments);
  va_end (arguments);
  printf ("%s: %s\n", name, text);
  disagreements++;
}

static const char *
connectivity_word (GNetworkConnectivity connectivity)
{
  switch (connectivity)
    {
    case G_NETWORK_CONNECTIVITY_LOCAL: return "local";
    case G_NETWORK_CONNECTIVITY_LIMITED: return "limited";
    case G_NETWORK_CONNECTIVITY_PORTAL: return "portal";
    case G_NETWORK_CONNECTIVITY_FULL: return "full";
    }
  return "?";
}

/* The spec's word for what the parser made of a line. */
static const char *
kind_word (gboolean parsed, const ReachdLine *line, const GError *error)
{
  if (!parsed)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED))
        return "version";
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_FAILED))
        return "refused";
      return "malformed";
    }
  switch (line->type)
    {
    case REACHD_LINE_STATUS: return "status";
    case REACHD_LINE_DESTINATION: return "destination";
    case REACHD_LINE_OTHER: return "other";
    }
  return "?";
}

static void
expect_boolean (const char *name, JsonObject *expect, const char *key, gboolean actual)
{
  if (!json_object_has_member (expect, key))
    return;
  gboolean wanted = json_object_get_boolean_member (expect, key);
  if (wanted != actual)
    disagree (name, "%s is %s, the spec says %s", key, actual ? "true" : "false", wanted ? "true" : "false");
}

/* A case's line as the daemon would send it, without its newline. */
static char *
line_bytes (JsonObject *spec_case)
{
  if (json_object_has_member (spec_case, "raw"))
    return g_strdup (json_object_get_string_member (spec_case, "raw"));
  return json_to_string (json_object_get_member (spec_case, "line"), FALSE);
}

static void
run_case (JsonObject *spec_case)
{
  const char *name = json_object_get_string_member (spec_case, "name");
  JsonObject *expect = json_object_get_object_member (spec_case, "expect");
  g_autofree char *bytes = line_bytes (spec_case);
  ReachdLine line;
  g_autoptr (GError) error = NULL;
  gboolean parsed = reachd_line_parse (bytes, strlen (bytes), &line, &error);
  const char *kind = kind_word (parsed, &line, error);
  const char *wanted = json_object_get_string_member (expect, "kind");
  if (g_strcmp0 (kind, wanted) != 0)
    disagree (name, "read as %s (%s), the spec says %s", kind, error != NULL ? error->message : "no error", wanted);
  else if (parsed && line.type == REACHD_LINE_STATUS)
    {
      expect_boolean (name, expect, "available", line.host.available);
      expect_boolean (name, expect, "online", line.host.online);
      expect_boolean (name, expect, "metered", line.host.metered);
      expect_boolean (name, expect, "reconfigured", line.reconfigured);
      expect_boolean (name, expect, "handover", line.handover);
      const char *connectivity = connectivity_word (line.host.connectivity);
      const char *wanted_connectivity = json_object_get_string_member (expect, "glib_connectivity");
      if (g_strcmp0 (connectivity, wanted_connectivity) != 0)
        disagree (name, "GLib connectivity is %s, the spec says %s", connectivity, wanted_connectivity);
    }
  if (parsed)
    reachd_line_clear (&line);
}

static void
expect_constant (JsonObject *constants, const char *key, gint64 actual)
{
  if (!json_object_has_member (constants, key))
    disagree ("constants.json", "has no %s", key);
  else if (json_object_get_int_member (constants, key) != actual)
    disagree ("constants.json", "%s is %" G_GINT64_FORMAT " in the module, %" G_GINT64_FORMAT " in the spec", key,
              actual, json_object_get_int_member (constants, key));
}

/* Not the spec's, but the module's own rule, checked where its parser is
 * built: what the daemon sends reaches the app's log (g_debug) only
 * escaped. */
static void
check_escaping (void)
{
  static const char hostile[] = "{\"type\":\"error\",\"version\":1,\"code\":\"x\\n\\u001b[31m\",\"message\":\"y\\u0007\"}";
  ReachdLine line;
  g_autoptr (GError) error = NULL;
  if (reachd_line_parse (hostile, strlen (hostile), &line, &error))
    {
      reachd_line_clear (&line);
      disagree ("a refusal with control characters", "was not read as a refusal");
      return;
    }
  for (const char *c = error->message; *c != '\0'; c++)
    if ((unsigned char) *c < 0x20 || *c == 0x7f)
      {
        disagree ("a refusal with control characters", "its error message holds byte 0x%02x unescaped", (unsigned char) *c);
        return;
      }
}

static JsonNode *
load (const char *path)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  if (!json_parser_load_from_file (parser, path, &error))
    {
      fprintf (stderr, "cannot read %s: %s\n", path, error->message);
      exit (2);
    }
  return json_node_copy (json_parser_get_root (parser));
}

static int
write_seeds (const char *directory, JsonArray *cases)
{
  for (guint i = 0; i < json_array_get_length (cases); i++)
    {
      g_autofree char *bytes = line_bytes (json_array_get_object_element (cases, i));
      g_autofree char *name = g_strdup_printf ("%s/spec-%02u.json", directory, i);
      g_autoptr (GError) error = NULL;
      if (!g_file_set_contents (name, bytes, -1, &error))
        {
          fprintf (stderr, "cannot write a seed: %s\n", error->message);
          return 2;
        }
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 4 && strcmp (argv[1], "--seeds") == 0)
    {
      g_autoptr (JsonNode) corpus = load (argv[3]);
      return write_seeds (argv[2], json_node_get_array (corpus));
    }
  if (argc != 3)
    {
      fprintf (stderr, "usage: %s status-lines.json constants.json\n       %s --seeds DIRECTORY status-lines.json\n",
               argv[0], argv[0]);
      return 2;
    }
  g_autoptr (JsonNode) corpus = load (argv[1]);
  g_autoptr (JsonNode) constants_root = load (argv[2]);
  JsonArray *cases = json_node_get_array (corpus);
  for (guint i = 0; i < json_array_get_length (cases); i++)
    run_case (json_array_get_object_element (cases, i));
  check_escaping ();
  JsonObject *constants = json_node_get_object (constants_root);
  expect_constant (constants, "protocol_version", REACHD_PROTOCOL_VERSION);
  expect_constant (constants, "first_retry_ms", REACHD_RETRY_FIRST_MS);
  expect_constant (constants, "longest_retry_ms", REACHD_RETRY_MAX_MS);
  expect_constant (constants, "stable_subscription_ms", REACHD_STABLE_MS);
  expect_constant (constants, "liveness_probe_spacing_ms", REACHD_PROBE_SPACING_MS);
  expect_constant (constants, "liveness_answer_timeout_ms", REACHD_PROBE_DEADLINE_MS);
  expect_constant (constants, "liveness_news_grace_ms", REACHD_NEWS_GRACE_MS);
  expect_constant (constants, "summary_line_limit_bytes", REACHD_MAX_LINE);
  printf ("%u cases, %d disagreements\n", json_array_get_length (cases), disagreements);
  return disagreements == 0 ? 0 : 1;
}
