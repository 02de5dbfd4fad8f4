/* Talking to the daemon's socket: where it is (the paths to try, and which
 * serve another network namespace), a connection that never blocks, reads
 * that never block the app's main loop, and init's first subscription,
 * which waits for the daemon's first status until init's deadline. */
/* secure_getenv */
#define _GNU_SOURCE
#include "reachd-daemon-socket.h"

#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A daemon at a default path (the user's own daemon's, the system's) is
 * trusted only when it runs as the app's user or root: anyone else who
 * could put a socket there (a runtime directory set up wrong, a shared
 * one) would answer for the network. Judged on the connected socket, by
 * the listener's credentials (SO_PEERCRED), before anything is sent: the
 * file's owner could change between a look at the path and the connect.
 * A path $REACHD_SOCKET names is the user's to choose, as for `reachd
 * status`. Read with secure_getenv: in a setuid program the variable is
 * the caller's, not the program's. */
static gboolean
trusts (const char *path, int fd, GError **error)
{
  const char *named = secure_getenv ("REACHD_SOCKET");
  if (named != NULL && g_str_equal (named, path))
    return TRUE;
  struct ucred peer = { .uid = (uid_t) -1 };
  socklen_t length = sizeof peer;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0 && length == sizeof peer
      && (peer.uid == getuid () || peer.uid == 0))
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
               "the daemon on %s runs as user %u, neither this one nor root: reachd does not trust it", path,
               (guint) peer.uid);
  return FALSE;
}

/* A non-blocking connection: a unix socket connects at once or fails (a
 * full listen queue fails with EAGAIN), so this never blocks. */
static int
connect_to (const char *path, GError **error)
{
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof address.sun_path)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s: the socket path is too long", path);
      return -1;
    }
  strcpy (address.sun_path, path);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *) &address, sizeof address) < 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "no reachd daemon answers on %s: %s", path,
                   g_strerror (saved));
      return -1;
    }
  if (!trusts (path, fd, error))
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* Connects and sends `requests` in one write. Requests are a few hundred
 * bytes on a fresh connection: they fit in the socket's buffer, so a short
 * write means the daemon is gone. */
int
reachd_connect_and_send (const char *path, const char *requests, GError **error)
{
  int fd = connect_to (path, error);
  if (fd < 0)
    return -1;
  gsize length = strlen (requests);
  ssize_t sent = send (fd, requests, length, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent != (ssize_t) length)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE, "reachd on %s took no request: %s", path,
                   sent < 0 ? g_strerror (errno) : "short write");
      close (fd);
      return -1;
    }
  return fd;
}

/* Reads what is there (at most `limit` bytes). Returns FALSE at the end of
 * the stream or on an error; TRUE when the socket has nothing more now. */
gboolean
reachd_read_available (int fd, ReachdLineBuffer *lines, gsize limit, GError **error)
{
  guint8 chunk[16 * 1024];
  for (gsize total = 0; total < limit;)
    {
      ssize_t count = recv (fd, chunk, sizeof chunk, MSG_DONTWAIT);
      if (count < 0 && (errno == EAGAIN || errno == EINTR))
        return TRUE;
      if (count < 0)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "reading from reachd: %s", g_strerror (errno));
          return FALSE;
        }
      if (count == 0)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, "reachd closed the connection");
          return FALSE;
        }
      if (!reachd_line_buffer_append (lines, chunk, (gsize) count, error))
        return FALSE;
      total += (gsize) count;
      /* Less than asked for: the socket is drained, and another recv would
       * only say EAGAIN. An end still to come wakes the source again. */
      if ((gsize) count < sizeof chunk)
        return TRUE;
    }
  return TRUE;
}

/* ---- Where the daemon listens ---- */

struct _ReachdDaemonPaths
{
  /* Worked out once, by new; read from any thread. */
  GStrv paths;
  /* Per path, atomically: its daemon serves another network namespace, so
   * it is not asked again. */
  gint *foreign;
};

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

ReachdDaemonPaths *
reachd_daemon_paths_new (void)
{
  ReachdDaemonPaths *paths = g_new0 (ReachdDaemonPaths, 1);
  paths->paths = socket_paths ();
  paths->foreign = g_new0 (gint, g_strv_length (paths->paths));
  return paths;
}

void
reachd_daemon_paths_free (ReachdDaemonPaths *paths)
{
  if (paths == NULL)
    return;
  g_strfreev (paths->paths);
  g_free (paths->foreign);
  g_free (paths);
}

const char *
reachd_daemon_paths_path (ReachdDaemonPaths *paths, gint index)
{
  return paths->paths[index];
}

gboolean
reachd_daemon_paths_is_foreign (ReachdDaemonPaths *paths, gint index)
{
  return g_atomic_int_get (&paths->foreign[index]);
}

/* Its daemon serves another network namespace: never asked again. The
 * error says so. */
GError *
reachd_daemon_paths_check_ours (ReachdDaemonPaths *paths, gint index, const ReachdNamespace *network, int fd)
{
  if (reachd_namespace_is_ours (network, fd))
    return NULL;
  const char *why = network->known ? "serves another network namespace"
                                    : "does not say which network namespace it serves (daemons since 0.7 do)";
  g_debug ("reachd: the daemon at %s %s; not asking it again", paths->paths[index], why);
  g_atomic_int_set (&paths->foreign[index], TRUE);
  return g_error_new (G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED, "the reachd daemon at %s %s", paths->paths[index], why);
}

gboolean
reachd_daemon_paths_any_left (ReachdDaemonPaths *paths)
{
  for (gint i = 0; paths->paths[i] != NULL; i++)
    if (!reachd_daemon_paths_is_foreign (paths, i))
      return TRUE;
  return FALSE;
}

/* The first path, of those not found foreign, that takes `requests` (its
 * index in `taken`); the last failure otherwise: see the header. */
int
reachd_daemon_paths_connect_first (ReachdDaemonPaths *paths, const char *requests, gint *taken,
                                   gboolean *nothing_listens, GError **error)
{
  int fd = -1;
  gboolean tried = FALSE, none = TRUE;
  for (gint i = 0; paths->paths[i] != NULL && fd < 0; i++)
    {
      if (reachd_daemon_paths_is_foreign (paths, i))
        continue;
      g_autoptr (GError) failure = NULL;
      fd = reachd_connect_and_send (paths->paths[i], requests, &failure);
      *taken = i;
      tried = TRUE;
      if (fd < 0)
        {
          none = none && g_error_matches (failure, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
          g_clear_error (error);
          g_propagate_error (error, g_steal_pointer (&failure));
        }
    }
  if (nothing_listens != NULL)
    *nothing_listens = fd < 0 && tried && none;
  if (fd < 0 && error != NULL && *error == NULL)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED,
                         "every reachd daemon found serves another network namespace");
  return fd;
}

/* ---- Init's subscription ---- */

/* Subscribes on the path at `index` and waits for the first status until
 * `deadline`: see the header. A daemon of another network namespace
 * (`foreign`) is marked so: the subscription does not retry it. */
int
reachd_daemon_paths_subscribe_now (ReachdDaemonPaths *paths, gint index, gint64 deadline, ReachdLineBuffer *lines,
                                   ReachdHostState *host, gboolean *answered, gboolean *foreign, GError **error)
{
  const char *path = reachd_daemon_paths_path (paths, index);
  *foreign = FALSE;
  *answered = FALSE;
  int fd = reachd_connect_and_send (path, REACHD_SUBSCRIBE_SUMMARY, error);
  if (fd < 0)
    return -1;
  gboolean have_status = FALSE;
  while (!have_status)
    {
      gint64 remaining = deadline - g_get_monotonic_time ();
      /* Connected, and neither a word nor the end: a daemon starting (its
       * socket's unit took the connection) or stopped. */
      if (remaining <= 0)
        return fd;
      GPollFD poll_fd = { .fd = fd, .events = G_IO_IN | G_IO_HUP | G_IO_ERR };
      if (g_poll (&poll_fd, 1, (gint) ((remaining + 999) / 1000)) <= 0)
        continue;
      g_autoptr (GError) read_error = NULL;
      gboolean open = reachd_read_available (fd, lines, REACHD_READ_PER_WAKEUP, &read_error);
      /* A refusal's error line says more than the end that follows it. The
       * first status is where the app starts: nothing to signal. */
      gboolean reconfigured = FALSE;
      gboolean handover = FALSE;
      if (!reachd_line_buffer_take_statuses (lines, host, &have_status, &reconfigured, &handover, error))
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
  GError *other = have_status ? reachd_daemon_paths_check_ours (paths, index, &host->network, fd) : NULL;
  if (other != NULL)
    {
      g_propagate_error (error, other);
      *foreign = TRUE;
      have_status = FALSE;
    }
  if (!have_status)
    {
      close (fd);
      return -1;
    }
  *answered = TRUE;
  return fd;
}
