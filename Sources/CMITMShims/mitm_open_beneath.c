#include "mitm_shims.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/openat2.h>
#include <sys/syscall.h>

static int open_with_openat2(int root_fd, const char *path, int flags) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    long fd;
    do {
        fd = syscall(SYS_openat2, root_fd, path, &how, sizeof how);
    } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
    return (int)fd;
}
#endif

// A component that failed to open as a directory: ELOOP when it is a symbolic link, so the caller can tell a link
// from a missing name.
static int refusal_for(int directory_fd, const char *name, int error) {
    struct stat info;
    if ((error == ENOTDIR || error == ELOOP) && fstatat(directory_fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0
        && S_ISLNK(info.st_mode)) return ELOOP;
    return error;
}

static int open_component_wise(int root_fd, const char *path, int flags) {
    char copy[4096];
    size_t length = strlen(path);
    if (length >= sizeof copy) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(copy, path, length + 1);
    int directory = root_fd;
    char *name = copy;
    for (;;) {
        while (*name == '/') name++;
        char *slash = strchr(name, '/');
        while (slash != NULL && slash[1] == '/') slash++;
        int last = slash == NULL || slash[1] == '\0';
        if (slash != NULL) *strchr(name, '/') = '\0';
        int error = 0;
        int next = -1;
        if (strcmp(name, "..") == 0) {
            error = EXDEV;
        } else if (last) {
            next = openat(directory, *name ? name : ".", flags | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0) error = refusal_for(directory, name, errno);
        } else if (strcmp(name, ".") != 0 && *name != '\0') {
            next = openat(directory, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0) error = refusal_for(directory, name, errno);
        } else {
            next = dup(directory);
        }
        if (directory != root_fd) close(directory);
        if (error != 0) {
            errno = error;
            return -1;
        }
        if (last) return next;
        directory = next;
        name = slash + 1;
    }
}

int mitm_open_beneath(int root_fd, const char *path, int flags, int component_wise) {
#ifdef __linux__
    if (!component_wise) {
        int fd = open_with_openat2(root_fd, path, flags);
        if (fd >= 0 || errno != ENOSYS) return fd;
    }
#endif
    return open_component_wise(root_fd, path, flags);
}
