/* The GIO module's whole life in one GLib program, for valgrind's memcheck
 * (GLibAppTests): a monitor of its own (GLib's default one is never freed),
 * can_reach sync and async, one network-changed, and the monitor released
 * with an async can_reach still under way.
 * Usage: module-lifecycle REACHABLE-ADDRESS BLACKHOLED-ADDRESS
 * Prints "ready" once it waits for the change; exits 0 when all went as
 * expected, 1 otherwise, 2 when the module did not load. */
#include <gio/gio.h>
#include <stdio.h>

static GMainLoop *loop;
static gboolean as_expected = TRUE;

static void
expect (gboolean holds, const char *what, const GError *error)
{
  printf ("%s %s%s%s\n", holds ? "ok" : "FAILED", what, error ? ": " : "", error ? error->message : "");
  fflush (stdout);
  as_expected = as_expected && holds;
}

static void
on_changed (GNetworkMonitor *monitor, gboolean available, gpointer data)
{
  expect (!available, "network-changed to unavailable", NULL);
  g_main_loop_quit (loop);
}

static void
on_reached (GObject *source, GAsyncResult *result, gpointer reachable)
{
  GError *error = NULL;
  gboolean answer = g_network_monitor_can_reach_finish (G_NETWORK_MONITOR (source), result, &error);
  expect (answer == GPOINTER_TO_INT (reachable), "can_reach_async", error);
  g_clear_error (&error);
  g_main_loop_quit (loop);
}

static gboolean
on_timeout (gpointer data)
{
  expect (FALSE, "a change within 30 s", NULL);
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

int
main (int argc, char **argv)
{
  GError *error = NULL;

  if (argc != 3)
    return 2;
  /* Loads the modules and registers the extension point. */
  g_network_monitor_get_default ();
  GIOExtension *extension = g_io_extension_point_get_extension_by_name (
      g_io_extension_point_lookup (G_NETWORK_MONITOR_EXTENSION_POINT_NAME), "reachd");
  if (extension == NULL)
    return 2;
  GNetworkMonitor *monitor = g_initable_new (g_io_extension_get_type (extension), NULL, &error, NULL);
  if (monitor == NULL)
    {
      fprintf (stderr, "init: %s\n", error->message);
      return 2;
    }
  loop = g_main_loop_new (NULL, FALSE);
  g_signal_connect (monitor, "network-changed", G_CALLBACK (on_changed), NULL);

  GSocketConnectable *reachable = g_network_address_new (argv[1], 443);
  GSocketConnectable *blackholed = g_network_address_new (argv[2], 443);
  expect (g_network_monitor_can_reach (monitor, reachable, NULL, &error), "can_reach", error);
  g_clear_error (&error);
  g_network_monitor_can_reach_async (monitor, blackholed, NULL, on_reached, GINT_TO_POINTER (FALSE));
  g_main_loop_run (loop);

  printf ("ready\n");
  fflush (stdout);
  guint timeout = g_timeout_add_seconds (30, on_timeout, NULL);
  g_main_loop_run (loop);
  g_source_remove (timeout);

  /* The task holds the monitor until it answers; then it is finalized. */
  g_network_monitor_can_reach_async (monitor, reachable, NULL, on_reached, GINT_TO_POINTER (TRUE));
  g_object_add_weak_pointer (G_OBJECT (monitor), (gpointer *) &monitor);
  g_object_unref (monitor);
  g_main_loop_run (loop);
  expect (monitor == NULL, "finalized", NULL);

  g_object_unref (reachable);
  g_object_unref (blackholed);
  g_main_loop_unref (loop);
  return as_expected ? 0 : 1;
}
