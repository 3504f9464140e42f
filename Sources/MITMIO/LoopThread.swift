import CMITMShims

#if canImport(Glibc)
import Glibc
#endif

/// Starts a detached thread that runs `body` and ends with it.
enum LoopThread {
    private final class Body {
        let name: String
        let run: () -> Void
        init(name: String, run: @escaping () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Traps when the system refuses a thread (at start-up): a loop without its thread would never run.
    static func start(name: String, _ body: @escaping () -> Void) {
        let context = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { raw in
                let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
                mitm_set_thread_name(body.name)
                body.run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            fatalError("cannot start the event loop's thread \(name): \(String(cString: strerror(result)))")
        }
        pthread_detach(thread)
    }
}
