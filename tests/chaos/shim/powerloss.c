/*
 * Preloaded into quince-server by the chaos harness's power-loss fault: every successful
 * fsync/fdatasync notes the file (inode) and its size *before* the call, which the call is
 * sure to have made durable. At a simulated power loss the harness cuts every file back to
 * its last noted size (or to nothing if it was never synced), as a machine losing its page
 * cache would, for files only ever appended to (the AOF). Directory changes (create,
 * rename) are taken as durable: this models lost data, not lost directory entries.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int log_fd = -1;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_log(void) {
    const char *path = getenv("QUINCE_CHAOS_SYNC_LOG");
    if (path)
        log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

static void note(const struct stat *st) {
    char line[64];
    int n;
    if (log_fd < 0 || !S_ISREG(st->st_mode))
        return;
    n = snprintf(line, sizeof line, "%llu %lld\n", (unsigned long long)st->st_ino, (long long)st->st_size);
    /* O_APPEND and one write per line: lines of concurrent threads don't interleave. */
    if (write(log_fd, line, n) != n)
        abort();
}

#define WRAP(name)                                                   \
    int name(int fd) {                                               \
        static int (*real)(int);                                     \
        struct stat st;                                              \
        int have, r;                                                 \
        pthread_once(&once, open_log);                               \
        if (!real)                                                   \
            real = (int (*)(int))dlsym(RTLD_NEXT, #name);            \
        have = fstat(fd, &st) == 0;                                  \
        r = real(fd);                                                \
        if (r == 0 && have)                                          \
            note(&st);                                               \
        return r;                                                    \
    }

WRAP(fsync)
WRAP(fdatasync)
