// libyaml as vendored by Yams: its event parser reads a document without building anything, which Yams' public
// API cannot do (its `compose` resolves every alias while composing).
internal import CYaml

/// Finds the first YAML alias (`*name`) in a document before anything expands it. A rules file needs no aliases,
/// and expanding nested ones ("billion laughs") turns a few hundred bytes into gigabytes.
enum YAMLAliasScan {
    /// Where an alias sits: 1-based line and column.
    struct Place: Equatable {
        let line: Int
        let column: Int
    }

    /// The place of the first alias in `text`, or nil when it has none or is not well-formed YAML (Yams then
    /// reports the mistake in its own words).
    static func firstAlias(in text: String) -> Place? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer -> Place? in
            // libyaml asserts that its input pointer is not NULL, which an empty buffer's may be.
            guard let start = buffer.baseAddress, !buffer.isEmpty else { return nil }
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else { return nil }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_input_string(&parser, start, buffer.count)
            var event = yaml_event_t()
            while yaml_parser_parse(&parser, &event) == 1 {
                defer { yaml_event_delete(&event) }
                switch event.type {
                case YAML_ALIAS_EVENT:
                    return Place(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
                case YAML_STREAM_END_EVENT:
                    return nil
                default:
                    continue
                }
            }
            return nil
        }
    }
}
