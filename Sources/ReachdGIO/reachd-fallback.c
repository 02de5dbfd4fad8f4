/* GLib's own backend on a thread of the module's: see reachd-fallback.h. */
#include "reachd-fallback.h"

struct _ReachdFallback
{
  gatomicrefcount refs;
  /* The app's: where changes are told. */
  GMainContext *app_context;
  ReachdFallbackChanged changed;
  gpointer user_data;
  /* Set by stop, on the app's context; read there before telling, and by
   * the thread at each wake-up of its context. */
  gint stopped;
  /* The thread's. */
  GMainContext *context;
  /* The backend, the thread's alone. */
  GNetworkMonitor *backend;
  /* The backend for questions: set by the thread once made, cleared by
   * stop, read by can_reach from any thread. */
  GMutex lock;
  GNetworkMonitor *monitor;
  gboolean knows_all;
  /* Set once the thread has tried to make the backend, with its state then
   * in `first` if it made one (`made`): what reachd_fallback_wait_made
   * waits for, under `lock`. */
  gboolean tried;
  gboolean made;
  ReachdFallbackState first;
  GCond tried_cond;
  /* Questions put to the backend and not answered yet: the thread ends
   * only when none is left, or one would never be answered. */
  gint questions;
};

ReachdFallback *
reachd_fallback_ref (ReachdFallback *fallback)
{
  g_atomic_ref_count_inc (&fallback->refs);
  return fallback;
}

void
reachd_fallback_unref (ReachdFallback *fallback)
{
  if (!g_atomic_ref_count_dec (&fallback->refs))
    return;
  g_main_context_unref (fallback->context);
  g_main_context_unref (fallback->app_context);
  g_mutex_clear (&fallback->lock);
  g_cond_clear (&fallback->tried_cond);
  g_free (fallback);
}

/* Runs `function` on `context`'s thread by an idle source, never by
 * g_main_context_invoke: that runs it on the calling thread whenever the
 * context is not running. */
static void
post (GMainContext *context, GSourceFunc function, gpointer data, GDestroyNotify destroy)
{
  GSource *source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, function, data, destroy);
  g_source_set_static_name (source, "[reachd-gio] fallback");
  g_source_attach (source, context);
  g_source_unref (source);
}

/* ---- On the app's context ---- */

typedef struct
{
  ReachdFallback *fallback;
  ReachdFallbackState state;
} Told;

static void
told_free (gpointer data)
{
  Told *told = data;
  reachd_fallback_unref (told->fallback);
  g_free (told);
}

static gboolean
tell (gpointer data)
{
  Told *told = data;
  if (!g_atomic_int_get (&told->fallback->stopped))
    told->fallback->changed (&told->state, told->fallback->user_data);
  return G_SOURCE_REMOVE;
}

/* The backend answered, on its thread; this runs in the context the
 * question was asked from, and passes the answer on to the caller's task:
 * so the backend's thread never holds that task, nor its source object. */
static void
on_answered (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  GError *error = NULL;
  (void) source;
  if (g_task_propagate_boolean (G_TASK (result), &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
  g_object_unref (task);
}

/* ---- On the thread ---- */

static ReachdFallbackState
backend_state (ReachdFallback *fallback)
{
  return (ReachdFallbackState) {
    .available = g_network_monitor_get_network_available (fallback->backend),
    .connectivity = g_network_monitor_get_connectivity (fallback->backend),
    .metered = g_network_monitor_get_network_metered (fallback->backend),
    .knows_all = fallback->knows_all,
  };
}

static void
on_changed (ReachdFallback *fallback)
{
  Told *told = g_new0 (Told, 1);
  told->fallback = reachd_fallback_ref (fallback);
  told->state = backend_state (fallback);
  post (fallback->app_context, tell, told, told_free);
}

/* The first of GLib's backends, by priority, that can be made; the
 * module's own and GLib's base monitor (always available, and no better
 * than the state the daemon last gave) left out. */
static GNetworkMonitor *
make_backend (const char **chosen)
{
  GIOExtensionPoint *point = g_io_extension_point_lookup (G_NETWORK_MONITOR_EXTENSION_POINT_NAME);
  for (GList *each = point != NULL ? g_io_extension_point_get_extensions (point) : NULL; each != NULL; each = each->next)
    {
      const char *name = g_io_extension_get_name (each->data);
      if (g_str_equal (name, "reachd") || g_str_equal (name, "base"))
        continue;
      g_autoptr (GError) error = NULL;
      GNetworkMonitor *monitor = g_initable_new (g_io_extension_get_type (each->data), NULL, &error, NULL);
      if (monitor != NULL)
        {
          *chosen = name;
          return monitor;
        }
      g_debug ("reachd: GLib's %s backend is not available (%s)", name, error->message);
    }
  return NULL;
}

static gpointer
run (gpointer data)
{
  ReachdFallback *fallback = data;
  /* The backend's sources, and its signals, go to this thread's context. */
  g_main_context_push_thread_default (fallback->context);
  const char *name = NULL;
  GNetworkMonitor *monitor = make_backend (&name);
  g_mutex_lock (&fallback->lock);
  if (monitor == NULL)
    g_debug ("reachd: the daemon does not answer, and no other backend of GLib's does: keeping the last state");
  else
    {
      g_debug ("reachd: the daemon does not answer; following GLib's %s backend until it does", name);
      fallback->backend = monitor;
      /* Not once stopped: no question may come after stop. */
      if (!g_atomic_int_get (&fallback->stopped))
        fallback->monitor = monitor;
      fallback->knows_all = !g_str_equal (name, "netlink");
      fallback->made = TRUE;
      fallback->first = backend_state (fallback);
    }
  fallback->tried = TRUE;
  g_cond_broadcast (&fallback->tried_cond);
  g_mutex_unlock (&fallback->lock);
  if (monitor != NULL)
    {
      gulong handlers[] = {
        g_signal_connect_swapped (monitor, "network-changed", G_CALLBACK (on_changed), fallback),
        g_signal_connect_swapped (monitor, "notify::connectivity", G_CALLBACK (on_changed), fallback),
        g_signal_connect_swapped (monitor, "notify::network-metered", G_CALLBACK (on_changed), fallback),
      };
      on_changed (fallback);
      /* Not a GMainLoop: a quit before it runs would be lost. A wake-up
       * never is (it stays pending until the next iteration polls). */
      while (!g_atomic_int_get (&fallback->stopped) || g_atomic_int_get (&fallback->questions) > 0)
        g_main_context_iteration (fallback->context, TRUE);
      for (gsize i = 0; i < G_N_ELEMENTS (handlers); i++)
        g_signal_handler_disconnect (monitor, handlers[i]);
    }
  /* Dropped where it was made: its sources are this context's. */
  g_clear_object (&monitor);
  g_main_context_pop_thread_default (fallback->context);
  reachd_fallback_unref (fallback);
  return NULL;
}

/* ---- can_reach, on the thread ---- */

typedef struct
{
  ReachdFallback *fallback;
  GNetworkMonitor *monitor;
  GSocketConnectable *connectable;
  GTask *task;
} Question;

static void
on_reached (GObject *monitor, GAsyncResult *result, gpointer data)
{
  Question *question = data;
  GError *error = NULL;
  /* Thread-safe: the task's callback runs in the task's own context. */
  if (g_network_monitor_can_reach_finish (G_NETWORK_MONITOR (monitor), result, &error))
    g_task_return_boolean (question->task, TRUE);
  else
    g_task_return_error (question->task, error);
  (void) g_atomic_int_dec_and_test (&question->fallback->questions);
  g_object_unref (question->task);
  g_object_unref (question->connectable);
  g_object_unref (question->monitor);
  reachd_fallback_unref (question->fallback);
  g_free (question);
}

static gboolean
ask (gpointer data)
{
  Question *question = data;
  g_network_monitor_can_reach_async (question->monitor, question->connectable, g_task_get_cancellable (question->task),
                                     on_reached, question);
  return G_SOURCE_REMOVE;
}

/* ---- The interface ---- */

ReachdFallback *
reachd_fallback_start (GMainContext *context, ReachdFallbackChanged changed, gpointer user_data)
{
  ReachdFallback *fallback = g_new0 (ReachdFallback, 1);
  g_atomic_ref_count_init (&fallback->refs);
  fallback->app_context = g_main_context_ref (context);
  fallback->changed = changed;
  fallback->user_data = user_data;
  fallback->context = g_main_context_new ();
  g_mutex_init (&fallback->lock);
  g_cond_init (&fallback->tried_cond);
  /* The thread's reference, dropped as it ends. */
  g_thread_unref (g_thread_new ("reachd-fallback", run, reachd_fallback_ref (fallback)));
  return fallback;
}

void
reachd_fallback_stop (ReachdFallback *fallback)
{
  /* No question is put to it from now on. */
  g_mutex_lock (&fallback->lock);
  g_atomic_int_set (&fallback->stopped, TRUE);
  fallback->monitor = NULL;
  g_mutex_unlock (&fallback->lock);
  /* A thread still making the backend sees `stopped` before it runs it. */
  g_main_context_wakeup (fallback->context);
  reachd_fallback_unref (fallback);
}

gboolean
reachd_fallback_wait_made (ReachdFallback *fallback, gint64 deadline, ReachdFallbackState *state)
{
  g_mutex_lock (&fallback->lock);
  while (!fallback->tried)
    if (!g_cond_wait_until (&fallback->tried_cond, &fallback->lock, deadline))
      break;
  gboolean made = fallback->made;
  if (made)
    *state = fallback->first;
  g_mutex_unlock (&fallback->lock);
  return made;
}

gboolean
reachd_fallback_can_reach_async (ReachdFallback *fallback, GSocketConnectable *connectable, GTask *task)
{
  g_mutex_lock (&fallback->lock);
  if (fallback->monitor == NULL)
    {
      g_mutex_unlock (&fallback->lock);
      return FALSE;
    }
  /* Counted before stop can see it: the thread answers it before ending. */
  g_atomic_int_inc (&fallback->questions);
  Question *question = g_new0 (Question, 1);
  question->fallback = reachd_fallback_ref (fallback);
  question->monitor = g_object_ref (fallback->monitor);
  question->connectable = g_object_ref (connectable);
  question->task = g_task_new (NULL, g_task_get_cancellable (task), on_answered, task);
  g_task_set_source_tag (question->task, reachd_fallback_can_reach_async);
  post (fallback->context, ask, question, NULL);
  g_mutex_unlock (&fallback->lock);
  return TRUE;
}

gboolean
reachd_fallback_can_reach (ReachdFallback *fallback, GSocketConnectable *connectable, GCancellable *cancellable,
                           gboolean *asked, GError **error)
{
  /* can_reach is synchronous: the answer is awaited in a context of its
   * own, which nothing else of the app's runs in. */
  g_autoptr (GMainContext) context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  g_autoptr (GTask) answer = g_task_new (NULL, cancellable, NULL, NULL);
  *asked = reachd_fallback_can_reach_async (fallback, connectable, g_object_ref (answer));
  if (!*asked)
    g_object_unref (answer);
  while (*asked && !g_task_get_completed (answer))
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  return *asked && g_task_propagate_boolean (answer, error);
}
