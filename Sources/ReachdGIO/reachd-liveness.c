/* Noticing a daemon that stopped answering: see reachd-liveness.h. */
#include "reachd-liveness.h"
#include "reachd-daemon-socket.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

/* No fence: no change waits for its news, or the kernel would not say what
 * was queued; no byte count passes it, so only an answer counts. */
#define NO_FENCE G_MAXUINT64

struct _ReachdLiveness
{
  GMainContext *context;
  ReachdLivenessChanged changed;
  gpointer user_data;
  /* The daemon followed; NULL while none is. */
  char *path;
  /* Its subscription, and the count of the bytes read from it. */
  int subscription;
  const ReachdLineBuffer *lines;
  /* Past `fence` bytes, the subscription's were written after the last
   * change heard (NO_FENCE: see there). */
  guint64 fence;
  int sentinel;
  GSource *sentinel_source;
  /* The question out, or -1; kept open while unanswered. */
  int probe;
  GSource *probe_source;
  ReachdLineBuffer answer;
  /* While the question out may still be answered in time. */
  GSource *deadline;
  /* While a kernel change waits for its news, or for the spacing. */
  GSource *pending;
  gint64 next_allowed;
  /* The last question got no answer in time. */
  gboolean stalled;
};


static void
close_probe (ReachdLiveness *liveness)
{
  reachd_clear_source (&liveness->probe_source);
  reachd_clear_source (&liveness->deadline);
  if (liveness->probe >= 0)
    {
      close (liveness->probe);
      liveness->probe = -1;
    }
  reachd_line_buffer_reset (&liveness->answer);
}

static gboolean
on_deadline (gpointer user_data)
{
  ReachdLiveness *liveness = user_data;
  g_clear_pointer (&liveness->deadline, g_source_unref);
  /* Kept open: the daemon's answer, once it resumes, says it is back. */
  liveness->stalled = TRUE;
  liveness->changed (FALSE, NULL, 0, liveness->user_data);
  return G_SOURCE_REMOVE;
}

static gboolean
on_answer (int fd, GIOCondition condition, gpointer user_data)
{
  ReachdLiveness *liveness = user_data;
  (void) condition;
  g_autoptr (GError) error = NULL;
  gboolean open = reachd_read_available (fd, &liveness->answer, REACHD_READ_PER_WAKEUP, &error);
  gsize length;
  g_autofree char *line = reachd_line_buffer_take (&liveness->answer, &length);
  if (line == NULL && open)
    return G_SOURCE_CONTINUE;
  /* Answered, or gone: the subscription's own end says the latter. */
  g_clear_pointer (&liveness->probe_source, g_source_unref);
  close_probe (liveness);
  liveness->next_allowed = g_get_monotonic_time () + REACHD_PROBE_SPACING_MS * G_TIME_SPAN_MILLISECOND;
  if (line != NULL && liveness->stalled)
    {
      liveness->stalled = FALSE;
      liveness->changed (TRUE, line, length, liveness->user_data);
    }
  return G_SOURCE_REMOVE;
}

static void
ask (ReachdLiveness *liveness)
{
  g_autoptr (GError) error = NULL;
  int fd = reachd_connect_and_send (liveness->path, REACHD_GET_SUMMARY, &error);
  if (fd < 0)
    {
      liveness->next_allowed = g_get_monotonic_time () + REACHD_PROBE_SPACING_MS * G_TIME_SPAN_MILLISECOND;
      /* A full listen queue is a daemon that does not accept: as good as
       * silent. Anything else is a daemon gone, which the subscription's
       * end tells. */
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK) && !liveness->stalled)
        {
          liveness->stalled = TRUE;
          liveness->changed (FALSE, NULL, 0, liveness->user_data);
        }
      return;
    }
  liveness->probe = fd;
  liveness->probe_source = reachd_attach_source (g_unix_fd_source_new (fd, G_IO_IN | G_IO_HUP | G_IO_ERR), G_SOURCE_FUNC (on_answer),
                                   liveness, "[reachd-gio] liveness answer", liveness->context);
  liveness->deadline = reachd_attach_source (g_timeout_source_new (REACHD_PROBE_DEADLINE_MS), on_deadline, liveness,
                               "[reachd-gio] liveness deadline", liveness->context);
}

static gboolean
on_pending_over (gpointer user_data)
{
  ReachdLiveness *liveness = user_data;
  g_clear_pointer (&liveness->pending, g_source_unref);
  if (liveness->path != NULL && liveness->probe < 0)
    ask (liveness);
  return G_SOURCE_REMOVE;
}

static void
drain (int fd)
{
  guint8 chunk[16 * 1024];
  for (;;)
    {
      ssize_t count = recv (fd, chunk, sizeof chunk, MSG_DONTWAIT);
      /* ENOBUFS (an overrun) says as much as a message: the kernel
       * reported something. */
      if (count > 0 || (count < 0 && (errno == ENOBUFS || errno == EINTR)))
        continue;
      return;
    }
}

static gboolean
on_kernel_change (int fd, GIOCondition condition, gpointer user_data)
{
  ReachdLiveness *liveness = user_data;
  (void) condition;
  drain (fd);
  if (liveness->path == NULL)
    return G_SOURCE_CONTINUE;
  /* What is queued on the subscription now was written before this was
   * read, perhaps before the change: only what comes after it counts. */
  int queued = 0;
  guint64 fence = ioctl (liveness->subscription, FIONREAD, &queued) == 0 && queued >= 0
                    ? liveness->lines->received + (guint64) queued
                    : NO_FENCE;
  if (liveness->probe >= 0 || liveness->pending != NULL)
    {
      /* A later change while one waits: the news must be of it (the
       * daemon may have stopped after the first), and the question stays
       * due when it was, so a flood cannot put it off. */
      if (liveness->fence != NO_FENCE)
        liveness->fence = fence;
      return G_SOURCE_CONTINUE;
    }
  liveness->fence = fence;
  gint64 wait = MAX (REACHD_NEWS_GRACE_MS * G_TIME_SPAN_MILLISECOND, liveness->next_allowed - g_get_monotonic_time ());
  liveness->pending = reachd_attach_source (g_timeout_source_new ((guint) ((wait + 999) / 1000)), on_pending_over, liveness,
                                            "[reachd-gio] liveness pending", liveness->context);
  return G_SOURCE_CONTINUE;
}

/* A netlink socket on the groups the daemon follows: links, addresses,
 * routes, rules. */
static int
open_sentinel (void)
{
  int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
  if (fd < 0)
    return -1;
  struct sockaddr_nl address = {
    .nl_family = AF_NETLINK,
    .nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE,
  };
  int rules[] = { RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE };
  int buffer = 64 * 1024;
  gboolean ready = bind (fd, (struct sockaddr *) &address, sizeof address) == 0;
  for (gsize i = 0; ready && i < G_N_ELEMENTS (rules); i++)
    ready = setsockopt (fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &rules[i], sizeof rules[i]) == 0;
  if (!ready)
    {
      close (fd);
      return -1;
    }
  (void) setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  return fd;
}

ReachdLiveness *
reachd_liveness_new (GMainContext *context, ReachdLivenessChanged changed, gpointer user_data)
{
  int sentinel = open_sentinel ();
  if (sentinel < 0)
    {
      g_debug ("reachd: no netlink socket (%s); a stopped daemon will go unnoticed", g_strerror (errno));
      return NULL;
    }
  ReachdLiveness *liveness = g_new0 (ReachdLiveness, 1);
  liveness->context = g_main_context_ref (context);
  liveness->changed = changed;
  liveness->user_data = user_data;
  liveness->sentinel = sentinel;
  liveness->subscription = -1;
  liveness->fence = NO_FENCE;
  liveness->probe = -1;
  reachd_line_buffer_init (&liveness->answer);
  liveness->sentinel_source = reachd_attach_source (g_unix_fd_source_new (sentinel, G_IO_IN), G_SOURCE_FUNC (on_kernel_change),
                                      liveness, "[reachd-gio] liveness sentinel", context);
  return liveness;
}

void
reachd_liveness_follow (ReachdLiveness *liveness, const char *path, int subscription, const ReachdLineBuffer *lines)
{
  if (liveness == NULL)
    return;
  close_probe (liveness);
  reachd_clear_source (&liveness->pending);
  liveness->subscription = path != NULL ? subscription : -1;
  liveness->lines = path != NULL ? lines : NULL;
  liveness->fence = NO_FENCE;
  /* What the kernel said before this subscription, its first status covers. */
  drain (liveness->sentinel);
  g_free (liveness->path);
  liveness->path = g_strdup (path);
  liveness->stalled = FALSE;
  liveness->next_allowed = 0;
}

void
reachd_liveness_heard (ReachdLiveness *liveness)
{
  if (liveness == NULL || liveness->lines == NULL)
    return;
  gboolean news = liveness->lines->received > liveness->fence;
  if (news)
    {
      liveness->fence = NO_FENCE;
      reachd_clear_source (&liveness->pending);
    }
  /* A stalled daemon that speaks has resumed; a question out is answered
   * only by news of the change it asks about. */
  if (!liveness->stalled && (liveness->probe < 0 || !news))
    return;
  close_probe (liveness);
  liveness->stalled = FALSE;
  liveness->next_allowed = g_get_monotonic_time () + REACHD_PROBE_SPACING_MS * G_TIME_SPAN_MILLISECOND;
}

void
reachd_liveness_free (ReachdLiveness *liveness)
{
  if (liveness == NULL)
    return;
  close_probe (liveness);
  reachd_clear_source (&liveness->pending);
  reachd_clear_source (&liveness->sentinel_source);
  close (liveness->sentinel);
  reachd_line_buffer_clear (&liveness->answer);
  g_free (liveness->path);
  g_main_context_unref (liveness->context);
  g_free (liveness);
}
