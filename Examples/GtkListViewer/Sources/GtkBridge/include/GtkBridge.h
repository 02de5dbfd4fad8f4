#ifndef GTK_BRIDGE_H
#define GTK_BRIDGE_H

#include <adwaita.h>

/* Runs Swift's main actor on GTK's main loop; call once, before the loop runs. */
void gtk_bridge_serve_main_actor(void);

/* The widget's accessible description: what a screen reader reads after its name. */
void gtk_bridge_set_accessible_description(GtkWidget *widget, const char *description);

#endif
