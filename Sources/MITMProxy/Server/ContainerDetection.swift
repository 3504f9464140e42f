import Foundation

/// Whether this process runs inside a container (podman, Docker, Kubernetes), where its interface addresses are the
/// container's own: a phone reaches the proxy at the host's address and the port the host publishes instead.
public enum ContainerDetection {
    /// The files container engines create in every container: podman's and Docker's.
    static let markerFiles = ["/run/.containerenv", "/.dockerenv"]

    /// This process's answer, read once.
    public static let isInContainer: Bool = signsSayContainer(
        markerFileExists: markerFiles.contains { FileManager.default.fileExists(atPath: $0) },
        containerVariable: ProcessInfo.processInfo.environment["container"],
        initCgroups: (try? String(contentsOfFile: "/proc/1/cgroup", encoding: .utf8)) ?? "")

    /// The decision from what the system shows: a marker file, the `container` variable podman and systemd-nspawn set,
    /// or a cgroup path of a container engine in PID 1's cgroups (cgroup v1 hosts).
    public static func signsSayContainer(markerFileExists: Bool, containerVariable: String?, initCgroups: String)
        -> Bool
    {
        if markerFileExists || !(containerVariable ?? "").isEmpty { return true }
        let enginePaths = ["/docker/", "/docker-", "/libpod", "/kubepods", "/containerd", "/lxc/"]
        return initCgroups.split(whereSeparator: \.isNewline).contains { line in
            enginePaths.contains { line.contains($0) }
        }
    }
}
