/* The GIO module's entry points: GIO loads the module when an app first
 * asks for the default network monitor, and lists it by the extension point
 * it implements in giomodule.cache (gio-querymodules), so that other apps'
 * extension points never load it. */
#include "reachd-network-monitor.h"

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  reachd_network_monitor_register (module);
  /* Resident: GLib unloads a module whose types are all unused, and the
   * thread that runs GLib's own backend (reachd-fallback.c) may still be
   * ending in the module's code when the last monitor is gone. */
  g_type_module_use (G_TYPE_MODULE (module));
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
  (void) module;
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *extension_points[] = { (char *) G_NETWORK_MONITOR_EXTENSION_POINT_NAME, NULL };
  return g_strdupv (extension_points);
}
