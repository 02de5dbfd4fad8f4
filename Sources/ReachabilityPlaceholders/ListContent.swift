import Reachability

/// What the list holds, as item counts per section.
///
/// ```swift
/// engine.contentChanged(ListContent(sections: [.init(rows: 0, hasHeader: true)]), at: .now)
/// ```
public struct ListContent: Sendable, Hashable {
    /// One section of the list.
    public struct Section: Sendable, Hashable {
        /// How many rows it holds.
        public var rows: Int
        /// Whether it shows a header (see ``HeaderOnlySectionPolicy``).
        public var hasHeader: Bool
        /// Whether it shows a footer (see ``HeaderOnlySectionPolicy``).
        public var hasFooter: Bool

        /// A section of `rows` rows, with a header or footer if it shows one.
        public init(rows: Int, hasHeader: Bool = false, hasFooter: Bool = false) {
            self.rows = rows
            self.hasHeader = hasHeader
            self.hasFooter = hasFooter
        }
    }

    /// The sections, in order.
    public var sections: [Section]

    /// A list of these sections.
    public init(sections: [Section]) {
        self.sections = sections
    }

    /// One section with `count` rows.
    public static func items(_ count: Int) -> ListContent {
        ListContent(sections: [Section(rows: count)])
    }

    /// No sections at all.
    public static let empty = ListContent(sections: [])

    func hasContent(headerOnlySections policy: HeaderOnlySectionPolicy) -> Bool {
        sections.contains { section in
            if section.rows > 0 { return true }
            switch policy {
            case .empty: return false
            case .content: return section.hasHeader || section.hasFooter
            }
        }
    }
}

/// Whether a section with a header or footer and no rows counts as content.
public enum HeaderOnlySectionPolicy: Sendable, Hashable {
    /// A header over nothing is still an empty list (the default).
    case empty
    /// The header is content in its own right.
    case content
}
