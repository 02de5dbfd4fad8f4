/* Talking to the daemon's socket, for the monitor and its liveness probe. */
#pragma once

#include <gio/gio.h>

#include "reachd-daemon-line.h"

G_BEGIN_DECLS

/* Connects to `path` without blocking (a full listen queue fails with
 * EAGAIN) and sends `requests` in one write; -1 with `error` otherwise. */
int reachd_connect_and_send (const char *path, const char *requests, GError **error);

/* Reads what is there, at most `limit` bytes, into `lines`. FALSE at the
 * end of the stream or on an error; TRUE when the socket has nothing more
 * now. */
gboolean reachd_read_available (int fd, ReachdLineBuffer *lines, gsize limit, GError **error);

G_END_DECLS
