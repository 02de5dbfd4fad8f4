import CAdwaita
import GtkBridge
import ReachabilityPlaceholders

/// One `AdwStatusPage` showing a placeholder: the catalog's icon, title and
/// message, its action as a pill button, and its accessibility label as the
/// page's accessible description. The window keeps two, so that one
/// placeholder replacing another crossfades like the rows do.
@MainActor
final class PlaceholderPage {
    let widget: Widget
    let name: String
    private let button: Widget
    private var action = PlaceholderAction.none
    private var actionURL: String?
    /// What the button does: the window's.
    var perform: (PlaceholderAction, _ url: String?) -> Void = { _, _ in }

    init(name: String) {
        self.name = name
        widget = adw_status_page_new()
        button = gtk_button_new()
        gtk_widget_set_halign(button, GTK_ALIGN_CENTER)
        gtk_widget_add_css_class(button, "pill")
        gtk_widget_add_css_class(button, "suggested-action")
        adw_status_page_set_child(widget.opaque, button)
        connect(button, "clicked") { [unowned self] in perform(action, actionURL) }
    }

    /// Sets a status page's description, which is markup: words from a
    /// catalog an app localised may hold an ampersand.
    static func describe(_ page: Widget, _ text: String) {
        let escaped = g_markup_escape_text(text, -1)
        adw_status_page_set_description(page.opaque, escaped)
        g_free(escaped)
    }

    /// Shows `content`, worded by `catalog`.
    func show(_ content: PlaceholderContent, catalog: PlaceholderCatalog) {
        adw_status_page_set_icon_name(widget.opaque, content.iconName)
        adw_status_page_set_title(widget.opaque, content.title)
        Self.describe(widget, content.message)
        gtk_bridge_set_accessible_text(widget, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, content.accessibilityLabel)
        action = content.action
        actionURL = content.actionURL
        // Sign in with no page to open has nothing to offer.
        let label = content.action == .openSignIn && content.actionURL == nil ? nil : catalog.title(for: content.action)
        gtk_widget_set_visible(button, label != nil ? 1 : 0)
        if let label { gtk_button_set_label(button.as(GtkButton.self), label) }
    }
}
