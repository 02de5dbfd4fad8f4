#include "GtkBridge.h"

#include <glib-unix.h>
#include <sys/eventfd.h>

/* On Linux, Swift's main actor is libdispatch's main queue, and only
 * dispatch_main() or Foundation's RunLoop drain it; GTK's main loop does not.
 * libdispatch signals work for the main queue on an eventfd, through the two
 * functions Foundation's RunLoop uses for the same purpose. Watching that
 * descriptor from GLib's main context runs main-actor jobs on GTK's thread
 * as soon as they are queued: no timer, and no wake-up while none is. */
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);

static gboolean drain_main_queue(gint fd, GIOCondition condition, gpointer data)
{
    (void)condition;
    (void)data;
    /* Read first: a job queued while the queue drains signals again. */
    eventfd_t count;
    (void)eventfd_read(fd, &count);
    _dispatch_main_queue_callback_4CF(NULL);
    return G_SOURCE_CONTINUE;
}

void gtk_bridge_serve_main_actor(void)
{
    g_unix_fd_add(_dispatch_get_main_queue_handle_4CF(), G_IO_IN, drain_main_queue, NULL);
}

void gtk_bridge_set_accessible_text(GtkWidget *widget, GtkAccessibleProperty property, const char *text)
{
    /* Variadic in C, so not callable from Swift. */
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), property, text, -1);
}
