import Foundation

/// Parsed JSON, read with subscripts: `json["streams"][0]["status"].int`.
public struct JSON: CustomStringConvertible {
    public let value: Any?

    public init(_ value: Any?) { self.value = value }

    public init(parsing text: String) {
        value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    public subscript(key: String) -> JSON { JSON((value as? [String: Any])?[key]) }
    public subscript(index: Int) -> JSON {
        guard let array = value as? [Any], array.indices.contains(index) else { return JSON(nil) }
        return JSON(array[index])
    }

    public var int: Int? { (value as? NSNumber)?.intValue }
    public var string: String? { value as? String }
    public var bool: Bool? { (value as? NSNumber)?.boolValue }
    public var array: [JSON] { (value as? [Any])?.map(JSON.init) ?? [] }
    public var isNull: Bool { value == nil || value is NSNull }
    public var description: String { String(describing: value ?? "nil") }
}
