/// mitm-proxy's own version, for the engine (`LibraryVersions.mitmProxy`) and the files it writes (a HAR's creator).
package enum ProductVersion {
    package static let mitmProxy = "0.1.0"
}
