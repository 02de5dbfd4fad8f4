/* libFuzzer target for the GIO module's reading of the daemon's bytes
 * (Sources/ReachdGIO/reachd-daemon-line.c): code that runs inside every GLib
 * app on whatever its socket brings. The bytes are read as one line, then as
 * a subscription's stream cut in two reads where the first byte says. A GLib
 * warning or critical fails the run: an app may run with them fatal
 * (G_DEBUG=fatal-warnings), so for it one is a crash. */
#include "reachd-daemon-line.h"

#include <stdint.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  ReachdLine line;
  if (reachd_line_parse ((const char *) data, size, &line, &error))
    {
      if (line.type == REACHD_LINE_DESTINATION)
        {
          GError *unreachable = reachd_destination_error (&line, size % 2 == 0);
          g_clear_error (&unreachable);
        }
      reachd_line_clear (&line);
    }
  g_clear_error (&error);

  ReachdLineBuffer stream;
  reachd_line_buffer_init (&stream);
  ReachdHostState newest = { 0 };
  gboolean have_status = FALSE, reconfigured = FALSE, handover = FALSE;
  size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  if (reachd_line_buffer_append (&stream, data, cut, &error)
      && reachd_line_buffer_take_statuses (&stream, &newest, &have_status, &reconfigured, &handover, &error)
      && reachd_line_buffer_append (&stream, data + cut, size - cut, &error))
    reachd_line_buffer_take_statuses (&stream, &newest, &have_status, &reconfigured, &handover, &error);
  g_clear_error (&error);
  reachd_line_buffer_clear (&stream);
  return 0;
}
