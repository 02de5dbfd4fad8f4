/* A GLib program for the package test, built on the host (Debian 12, as in
 * the container) and run in the container: which network monitor GLib
 * chose, and what it says. */
#include <gio/gio.h>
#include <stdio.h>

int
main (void)
{
  GNetworkMonitor *monitor = g_network_monitor_get_default ();

  printf ("%s available=%d\n", G_OBJECT_TYPE_NAME (monitor),
          g_network_monitor_get_network_available (monitor));
  return 0;
}
