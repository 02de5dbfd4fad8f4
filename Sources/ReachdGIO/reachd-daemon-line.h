/* What the module reads from reachd's socket: newline-delimited JSON
 * (docs/PROTOCOL.md), turned into the few facts GNetworkMonitor exposes.
 * Pure functions of bytes: no I/O, no main context. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* A line longer than this is not reachd's: the daemon's longest (a
 * destination with eight addresses) is a few KiB. */
#define REACHD_MAX_LINE (64 * 1024)

/* The protocol version this module speaks. */
#define REACHD_PROTOCOL_VERSION 1

/* The network namespace a status describes (`netns`); `known` is FALSE
 * from a daemon that predates saying so, and `cookie` 0 where its kernel
 * has none. */
typedef struct {
  gboolean known;
  guint64 inode;
  guint64 device;
  guint64 cookie;
} ReachdNamespace;

/* The host's state, as GNetworkMonitor's three properties, and the network
 * it is about. `online` is the Swift library's NetworkStatus.online, which
 * GLib has no property for: what `connectivity` is made from, kept so that
 * Tests/ClientSpec can hold both readers to one answer. */
typedef struct {
  gboolean available;
  gboolean online;
  GNetworkConnectivity connectivity;
  gboolean metered;
  ReachdNamespace network;
} ReachdHostState;

typedef enum {
  REACHD_LINE_STATUS,
  REACHD_LINE_DESTINATION,
  /* A type this version does not know: a newer daemon may send more. */
  REACHD_LINE_OTHER,
} ReachdLineType;

typedef enum {
  REACHD_DESTINATION_REACHABLE,
  REACHD_DESTINATION_UNREACHABLE,
  REACHD_DESTINATION_UNRESOLVED,
  /* pending, or a state this version does not know. */
  REACHD_DESTINATION_UNDECIDED,
} ReachdDestinationState;

typedef struct {
  ReachdLineType type;
  ReachdHostState host;              /* REACHD_LINE_STATUS */
  /* REACHD_LINE_STATUS: its `changes` include a path change, which GLib
   * calls a change of network configuration, so `network-changed` fires
   * even where the three properties stay as they were: a handover to a VPN
   * or another uplink. */
  gboolean reconfigured;
  /* REACHD_LINE_STATUS: one of them is a handover, a `path` change with a
   * path before and after: the family stayed online on another path. */
  gboolean handover;
  ReachdDestinationState state;      /* REACHD_LINE_DESTINATION */
  char *id;                          /* REACHD_LINE_DESTINATION, or NULL */
  char *target;                      /* REACHD_LINE_DESTINATION */
  char *reason;                      /* REACHD_LINE_DESTINATION, or NULL */
} ReachdLine;

void reachd_line_clear (ReachdLine *line);

/* Whether `network` (a daemon's) is the calling thread's namespace; `fd`, a
 * socket of this thread's, gives the cookie to compare where both have one.
 * A daemon that predates saying is trusted. */
gboolean reachd_namespace_is_ours (const ReachdNamespace *network, int fd);

/* Decodes one line (without its newline). Fails, in G_IO_ERROR, for what
 * means the daemon can't be followed: bytes that are not a JSON object, an
 * error line (its code and message in the error), another protocol version. */
gboolean reachd_line_parse (const char *bytes, gsize length, ReachdLine *line, GError **error);

/* Bytes read from a socket, split into lines. */
typedef struct {
  GByteArray *pending;
  /* Where the unterminated line in `pending` begins. */
  gsize line_start;
  /* Bytes appended since the stream began: what the liveness sentinel
   * compares with what was queued when the kernel reported a change. */
  guint64 received;
} ReachdLineBuffer;

void reachd_line_buffer_init (ReachdLineBuffer *buffer);
void reachd_line_buffer_clear (ReachdLineBuffer *buffer);
/* Drops what is pending: a new connection starts a new stream. */
void reachd_line_buffer_reset (ReachdLineBuffer *buffer);

/* Appends bytes; fails when a line is, or grows, longer than
 * REACHD_MAX_LINE: the one place that limit is enforced. */
gboolean reachd_line_buffer_append (ReachdLineBuffer *buffer, const guint8 *bytes, gsize length, GError **error);

/* The next complete line (without its newline) or NULL; free with g_free. */
char *reachd_line_buffer_take (ReachdLineBuffer *buffer, gsize *length);

/* A subscription's lines: every complete one decoded, the newest status in
 * `newest` (and `have_status`), `reconfigured` and `handover` set when one
 * of them says so (ReachdLine). The flags are only ever set, so that reads
 * add up; other lines are skipped. FALSE, with `error`, at a line that
 * fails reachd_line_parse (those before it are taken). */
gboolean reachd_line_buffer_take_statuses (ReachdLineBuffer *lines, ReachdHostState *newest, gboolean *have_status,
                                           gboolean *reconfigured, gboolean *handover, GError **error);

/* GLib's error for a destination that is not reachable: a GResolverError
 * for a name that did not resolve, else G_IO_ERROR_NETWORK_UNREACHABLE when
 * the host has no way out at all, G_IO_ERROR_HOST_UNREACHABLE otherwise. */
GError *reachd_destination_error (const ReachdLine *line, gboolean host_available);

G_END_DECLS
