#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mitm_shims.h"
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>

int mitm_spawn_with_stdio(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                          int stdin_fd, int stdout_fd, int stderr_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    sigset_t all, none;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return result;
    }
    sigfillset(&all);
    sigemptyset(&none);
    const int given[3] = {stdin_fd, stdout_fd, stderr_fd};
    for (int target = 0; target < 3 && result == 0; target++) {
        if (given[target] >= 0) result = posix_spawn_file_actions_adddup2(&actions, given[target], target);
    }
    if (result == 0 &&
        (result = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) == 0 &&
        (result = posix_spawnattr_setsigdefault(&attributes, &all)) == 0 &&
        (result = posix_spawnattr_setsigmask(&attributes, &none)) == 0 &&
        (result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)) == 0) {
        result = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    }
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

int mitm_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[]) {
    return mitm_spawn_with_stdio(pid, path, argv, envp, -1, -1, -1);
}

int mitm_become_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}
