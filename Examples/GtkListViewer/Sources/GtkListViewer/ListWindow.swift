import CAdwaita
import GtkBridge
import ReachabilityPlaceholders

/// The list's window: a header bar (the list's name, a refresh button, a
/// spinner while a refresh runs) over a `GtkStack` that crossfades between
/// the rows (with a banner that slides down over them), the loading page,
/// and two placeholder pages, as the GNOME HIG shows an empty state: an
/// `AdwStatusPage` in place of the list.
@MainActor
final class ListWindow {
    let window: Widget
    private let catalog: PlaceholderCatalog
    private let stack: Widget
    private let rows: Widget
    private let bannerRevealer: Widget
    private let bannerLabel: Widget
    private let bannerButton: Widget
    private let refreshSpinner: Widget
    private let loading: Widget
    private let loadingSpinner: Widget
    private let placeholders: [PlaceholderPage]
    /// Which of `placeholders` shows, while one does.
    private var current = 0
    /// What the buttons ask for: the viewer's.
    var reload: () -> Void = {}
    var openPage: (String) -> Void = { _ in }

    /// More rows than this are not made: a server that sends a million
    /// items gets a row saying how many more there are.
    static let rowLimit = 1000

    init(application: UnsafeMutablePointer<GtkApplication>, title: String, subtitle: String, catalog: PlaceholderCatalog) {
        self.catalog = catalog
        window = adw_application_window_new(application)
        gtk_window_set_default_size(window.as(GtkWindow.self), 480, 560)
        gtk_window_set_title(window.as(GtkWindow.self), title)

        let header = adw_header_bar_new()!
        adw_header_bar_set_title_widget(header.opaque, adw_window_title_new(title, subtitle))
        let refresh = gtk_button_new_from_icon_name("view-refresh-symbolic")!
        // An icon alone: the tooltip for the eye, the label for a screen reader.
        let refreshLabel = catalog.localize("action.refresh", "Refresh")
        gtk_widget_set_tooltip_text(refresh, refreshLabel)
        gtk_bridge_set_accessible_text(refresh, GTK_ACCESSIBLE_PROPERTY_LABEL, refreshLabel)
        adw_header_bar_pack_start(header.opaque, refresh)
        refreshSpinner = gtk_spinner_new()
        adw_header_bar_pack_end(header.opaque, refreshSpinner)

        (bannerRevealer, bannerLabel, bannerButton) = Self.banner()
        rows = gtk_list_box_new()
        gtk_list_box_set_selection_mode(rows.opaque, GTK_SELECTION_NONE)
        gtk_widget_add_css_class(rows, "boxed-list")
        gtk_widget_set_valign(rows, GTK_ALIGN_START)
        for side in [gtk_widget_set_margin_top, gtk_widget_set_margin_bottom, gtk_widget_set_margin_start, gtk_widget_set_margin_end] {
            side(rows, 12)
        }
        let clamp = adw_clamp_new()!
        adw_clamp_set_child(clamp.opaque, rows)
        let scrolled = gtk_scrolled_window_new()!
        gtk_scrolled_window_set_child(scrolled.opaque, clamp)
        gtk_widget_set_vexpand(scrolled, 1)
        let rowsPage = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)!
        gtk_box_append(rowsPage.as(GtkBox.self), bannerRevealer)
        gtk_box_append(rowsPage.as(GtkBox.self), scrolled)

        loading = adw_status_page_new()
        loadingSpinner = gtk_spinner_new()
        gtk_widget_set_size_request(loadingSpinner, 32, 32)
        adw_status_page_set_child(loading.opaque, loadingSpinner)

        placeholders = [PlaceholderPage(name: "placeholder-a"), PlaceholderPage(name: "placeholder-b")]
        stack = gtk_stack_new()
        // DZNEmptyDataSet's fade-in, both ways.
        gtk_stack_set_transition_type(stack.opaque, GTK_STACK_TRANSITION_TYPE_CROSSFADE)
        gtk_stack_set_transition_duration(stack.opaque, 250)
        // Nothing before the first decision: not a spinner, not "no data".
        gtk_stack_add_named(stack.opaque, gtk_box_new(GTK_ORIENTATION_VERTICAL, 0), "blank")
        gtk_stack_add_named(stack.opaque, rowsPage, "rows")
        gtk_stack_add_named(stack.opaque, loading, "loading")
        for page in placeholders { gtk_stack_add_named(stack.opaque, page.widget, page.name) }
        gtk_widget_set_vexpand(stack, 1)

        let content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)!
        gtk_box_append(content.as(GtkBox.self), header)
        gtk_box_append(content.as(GtkBox.self), stack)
        adw_application_window_set_content(window.as(AdwApplicationWindow.self), content)

        connect(refresh, "clicked") { [unowned self] in reload() }
        connect(bannerButton, "clicked") { [unowned self] in reload() }
        for page in placeholders {
            page.perform = { [unowned self] action, url in
                switch action {
                case .retry: reload()
                case .openSignIn: if let url { openPage(url) }
                case .none: break
                }
            }
        }
    }

    /// The banner over the rows, libadwaita 1.2 having no `AdwBanner`: a
    /// label and a button in a revealer that slides down.
    private static func banner() -> (revealer: Widget, label: Widget, button: Widget) {
        let label = gtk_label_new(nil)!
        gtk_label_set_wrap(label.opaque, 1)
        gtk_widget_set_hexpand(label, 1)
        gtk_label_set_xalign(label.opaque, 0)
        let button = gtk_button_new()!
        gtk_widget_set_valign(button, GTK_ALIGN_CENTER)
        let bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12)!
        gtk_widget_add_css_class(bar, "reachd-banner")
        gtk_box_append(bar.as(GtkBox.self), label)
        gtk_box_append(bar.as(GtkBox.self), button)
        let revealer = gtk_revealer_new()!
        gtk_revealer_set_transition_type(revealer.opaque, GTK_REVEALER_TRANSITION_TYPE_SLIDE_DOWN)
        gtk_revealer_set_child(revealer.opaque, bar)
        return (revealer, label, button)
    }

    /// The banner's look, after AdwBanner's (libadwaita 1.3): the accent
    /// colour, faded into the window's.
    static let css = """
        .reachd-banner {
          background-color: mix(@accent_bg_color, @window_bg_color, 0.7);
          color: @window_fg_color;
          padding: 6px 12px;
        }
        """

    /// Shows what the engine decided. `newKind`: another kind than before
    /// (a placeholder replacing another crossfades; the same one updates in place).
    func show(_ state: PlaceholderState, newKind: Bool) {
        showRefreshing(state.isRefreshing)
        // A spinning spinner draws every frame, shown or not (seen as 700
        // writes a second to the X server from an idle window): it spins
        // only on its page.
        spin(loadingSpinner, state.kind == .loading)
        switch state.kind {
        case .content:
            showBanner(catalog.banner(for: state))
            gtk_stack_set_visible_child_name(stack.opaque, "rows")
        case .loading:
            if let content = catalog.content(for: state) {
                adw_status_page_set_title(loading.opaque, content.title)
                PlaceholderPage.describe(loading, content.message)
            }
            gtk_stack_set_visible_child_name(stack.opaque, "loading")
        case .noData, .noNetwork, .signInRequired, .noInternet, .failed:
            guard let content = catalog.content(for: state) else { return }
            if newKind { current = 1 - current }
            placeholders[current].show(content, catalog: catalog)
            gtk_stack_set_visible_child_name(stack.opaque, placeholders[current].name)
        }
    }

    private func showBanner(_ banner: PlaceholderBanner?) {
        if let banner {
            gtk_label_set_text(bannerLabel.opaque, banner.message)
            let button = catalog.title(for: banner.action)
            gtk_widget_set_visible(bannerButton, button != nil ? 1 : 0)
            if let button { gtk_button_set_label(bannerButton.as(GtkButton.self), button) }
        }
        gtk_revealer_set_reveal_child(bannerRevealer.opaque, banner != nil ? 1 : 0)
    }

    private func showRefreshing(_ refreshing: Bool) {
        gtk_widget_set_visible(refreshSpinner, refreshing ? 1 : 0)
        spin(refreshSpinner, refreshing)
    }

    private func spin(_ spinner: Widget, _ spinning: Bool) {
        if spinning { gtk_spinner_start(spinner.opaque) } else { gtk_spinner_stop(spinner.opaque) }
    }

    /// Replaces the rows with `items`, as text: a server's words are never markup.
    func showItems(_ items: [String]) {
        while let row = gtk_widget_get_first_child(rows) {
            gtk_list_box_remove(rows.opaque, row)
        }
        for item in items.prefix(Self.rowLimit) {
            gtk_list_box_append(rows.opaque, Self.row(item))
        }
        if items.count > Self.rowLimit {
            gtk_list_box_append(rows.opaque, Self.row("… and \(items.count - Self.rowLimit) more"))
        }
    }

    private static func row(_ title: String) -> Widget {
        let row = adw_action_row_new()!
        adw_preferences_row_set_use_markup(row.as(AdwPreferencesRow.self), 0)
        adw_preferences_row_set_title(row.as(AdwPreferencesRow.self), title)
        return row
    }
}
