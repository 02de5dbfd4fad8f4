#ifndef GTK_BRIDGE_H
#define GTK_BRIDGE_H

#include <adwaita.h>

/* Runs Swift's main actor on GTK's main loop; call once, before the loop runs. */
void gtk_bridge_serve_main_actor(void);

/* A text property of the widget for screen readers: its label (the name
 * read first) or its description (read after it). */
void gtk_bridge_set_accessible_text(GtkWidget *widget, GtkAccessibleProperty property, const char *text);

#endif
