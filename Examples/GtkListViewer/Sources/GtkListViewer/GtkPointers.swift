import CAdwaita

/// A GTK widget as constructors return it.
typealias Widget = UnsafeMutablePointer<GtkWidget>

extension UnsafeMutablePointer where Pointee == GtkWidget {
    /// The widget as another of its C types: what GTK's casting macros
    /// (`GTK_BOX (widget)`) do, which Swift can't import. Derivable types
    /// (GtkBox, AdwActionRow) import as typed pointers.
    func `as`<T>(_: T.Type) -> UnsafeMutablePointer<T> {
        UnsafeMutablePointer<T>(OpaquePointer(self))
    }

    /// The widget as a type whose struct GTK keeps private (AdwStatusPage,
    /// GtkStack, GtkLabel, every final type), which imports as an opaque pointer.
    var opaque: OpaquePointer { OpaquePointer(self) }
}
