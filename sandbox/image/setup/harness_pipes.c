/* Preloaded into the JavaScript runtime of a job (LD_PRELOAD): pipe() and pipe2() hand
 * out pipes the worker made before its first job (HARNESS_PIPES="r,w;r,w;..."), since a
 * job may make none itself (sandbox/worker/confine.py: every new pipe takes a number of
 * the host's one inode counter, which a later job could read). node makes one at start
 * (libuv's signal lock). When they are used up, the call fails as the filter makes it
 * fail (EPERM). Each descriptor is given once, with the flags the caller asked for. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

static int taken = 0;

static int take(int fds[2]) {
    const char *spec = getenv("HARNESS_PIPES");
    int index = 0;
    if (spec == NULL) return -1;
    while (*spec) {
        char *end;
        long r = strtol(spec, &end, 10), w;
        if (*end != ',') return -1;
        w = strtol(end + 1, &end, 10);
        if (index++ == taken) {
            taken++;
            fds[0] = (int)r;
            fds[1] = (int)w;
            return 0;
        }
        if (*end != ';') return -1;
        spec = end + 1;
    }
    return -1;
}

int pipe2(int fds[2], int flags) {
    int pair[2];
    if (take(pair) != 0) {
        errno = EPERM;
        return -1;
    }
    for (int k = 0; k < 2; k++) {
        if (flags & O_CLOEXEC) fcntl(pair[k], F_SETFD, FD_CLOEXEC);
        if (flags & O_NONBLOCK) fcntl(pair[k], F_SETFL, fcntl(pair[k], F_GETFL) | O_NONBLOCK);
    }
    fds[0] = pair[0];
    fds[1] = pair[1];
    return 0;
}

int pipe(int fds[2]) { return pipe2(fds, 0); }
