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

/* For each path not found foreign, the nearest directory that exists and
 * the next name down the path from it, into `directories` and `names`. */
static void
find_targets (ReachdDaemonPaths *paths, GPtrArray *directories, GPtrArray *names)
{
  for (gint i = 0; reachd_daemon_paths_path (paths, i) != NULL; i++)
    {
      if (reachd_daemon_paths_is_foreign (paths, i))
        continue;
      const char *path = reachd_daemon_paths_path (paths, i);
      char *directory = g_path_get_dirname (path);
      char *name = g_path_get_basename (path);
      while (access (directory, F_OK) != 0 && !g_str_equal (directory, "/") && !g_str_equal (directory, "."))
        {
          g_free (name);
          name = g_path_get_basename (directory);
          char *parent = g_path_get_dirname (directory);
          g_free (directory);
          directory = parent;
        }
      g_ptr_array_add (directories, directory);
      g_ptr_array_add (names, name);
    }
}

static gboolean
same_strings (GPtrArray *a, GPtrArray *b)
{
  if (a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    if (!g_str_equal (g_ptr_array_index (a, i), g_ptr_array_index (b, i)))
      return FALSE;
  return TRUE;
}

/* Every directory is watched, or none is: a path left unwatched would be
 * waited for without end. A directory made between finding it missing and
 * watching its parent sends its parent no event: the directories are
 * looked for again once watched. */
static int
watch_targets (ReachdDaemonPaths *paths, GPtrArray *names, GError **error)
{
  for (int round = 0; round < 8; round++)
    {
      g_autoptr (GPtrArray) directories = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_set_size (names, 0);
      find_targets (paths, directories, names);
      if (directories->len == 0)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "no daemon's socket to watch for");
          return -1;
        }
      int fd = inotify_init1 (IN_CLOEXEC | IN_NONBLOCK);
      for (guint i = 0; fd >= 0 && i < directories->len; i++)
        if (inotify_add_watch (fd, g_ptr_array_index (directories, i), WATCHED_EVENTS) < 0)
          {
            int saved = errno;
            close (fd);
            fd = -1;
            errno = saved;
          }
      if (fd < 0)
        {
          int saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot watch for the daemon's socket: %s",
                       g_strerror (saved));
          return -1;
        }
      g_autoptr (GPtrArray) again = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GPtrArray) again_names = g_ptr_array_new_with_free_func (g_free);
      find_targets (paths, again, again_names);
      if (same_strings (directories, again) && same_strings (names, again_names))
        return fd;
      close (fd);
    }
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_BUSY, "the daemon's socket directories keep changing");
  return -1;
}

ReachdSocketWatch *
reachd_socket_watch_new (ReachdDaemonPaths *paths, GMainContext *context, GSourceFunc changed, gpointer data,
                         GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int fd = watch_targets (paths, names, error);
  if (fd < 0)
    return NULL;
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
