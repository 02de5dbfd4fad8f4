/* Raw inotify, as reachd's own clients watch (FileChangeWatch.daemonSockets):
 * GFileMonitor polls where a directory does not exist yet (/run/reachd
 * before the daemon's first start, or once it is gone with its runtime
 * directory), and a poll is the timer this replaces. */
#include "reachd-socket-watch.h"

#include <errno.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <glib-unix.h>

/* Made (a socket bound, a directory made) or renamed into place, and the
 * watched directory going: not the files a runtime directory sees written
 * all day, each of which would wake the app. */
#define WATCHED_EVENTS (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)

struct _ReachdSocketWatch
{
  int fd;
  GSource *source;
  /* The names looked for, one per path. */
  GPtrArray *names;
  GSourceFunc changed;
  gpointer data;
};

static gboolean
on_events (int fd, GIOCondition condition, gpointer user_data)
{
  ReachdSocketWatch *watch = user_data;
  (void) condition;
  char buffer[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  gboolean changed = FALSE;
  ssize_t length;
  while ((length = read (fd, buffer, sizeof buffer)) > 0)
    for (const char *at = buffer; at < buffer + length;)
      {
        const struct inotify_event *event = (const struct inotify_event *) at;
        /* A watched directory went: what it held may come back anywhere below. */
        if ((event->mask & (IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) != 0
            || (event->len > 0 && g_ptr_array_find_with_equal_func (watch->names, event->name, g_str_equal, NULL)))
          changed = TRUE;
        at += sizeof *event + event->len;
      }
  if (!changed)
    return G_SOURCE_CONTINUE;
  /* Read before the call, which may free the watch. */
  GSourceFunc call = watch->changed;
  return call (watch->data);
}

ReachdSocketWatch *
reachd_socket_watch_new (ReachdDaemonPaths *paths, GMainContext *context, GSourceFunc changed, gpointer data,
                         GError **error)
{
  int fd = inotify_init1 (IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "inotify: %s", g_strerror (saved));
      return NULL;
    }
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  for (gint i = 0; reachd_daemon_paths_path (paths, i) != NULL; i++)
    {
      if (reachd_daemon_paths_is_foreign (paths, i))
        continue;
      const char *path = reachd_daemon_paths_path (paths, i);
      g_autofree char *directory = g_path_get_dirname (path);
      g_autofree char *name = g_path_get_basename (path);
      while (access (directory, F_OK) != 0 && !g_str_equal (directory, "/") && !g_str_equal (directory, "."))
        {
          g_free (name);
          name = g_path_get_basename (directory);
          char *parent = g_path_get_dirname (directory);
          g_free (directory);
          directory = parent;
        }
      if (inotify_add_watch (fd, directory, WATCHED_EVENTS) >= 0)
        g_ptr_array_add (names, g_steal_pointer (&name));
    }
  if (names->len == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "no directory of a daemon's socket can be watched");
      close (fd);
      return NULL;
    }
  ReachdSocketWatch *watch = g_new0 (ReachdSocketWatch, 1);
  watch->fd = fd;
  watch->names = g_steal_pointer (&names);
  watch->changed = changed;
  watch->data = data;
  watch->source = reachd_attach_source (g_unix_fd_source_new (fd, G_IO_IN), G_SOURCE_FUNC (on_events), watch,
                                        "[reachd-gio] socket watch", context);
  return watch;
}

void
reachd_socket_watch_free (ReachdSocketWatch *watch)
{
  reachd_clear_source (&watch->source);
  close (watch->fd);
  g_ptr_array_unref (watch->names);
  g_free (watch);
}
