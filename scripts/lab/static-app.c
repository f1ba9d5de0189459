/*
 * The lab's "distroless" application for the debugging tests (podctl debug, cp, exec --user, top):
 * one static binary and no shell, no tar, no coreutils beside it, like the images crictl cannot help
 * with. Without arguments it serves: it waits for SIGTERM/SIGINT and exits 0. A few words print
 * what a test needs to see from inside the container, since the image has no `id` or `pwd`:
 *   /app id        "UID GID" of the process
 *   /app pwd       its working directory
 *   /app env NAME  the variable's value (exit 1 when unset)
 *
 * Built by scripts/lab/registry.sh with: gcc -static -Os -s -o app static-app.c
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_term(int sig) {
    (void)sig;
    _exit(0);
}

int main(int argc, char **argv) {
    char cwd[4096];
    if (argc >= 2 && strcmp(argv[1], "id") == 0) {
        printf("%u %u\n", (unsigned)getuid(), (unsigned)getgid());
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "pwd") == 0) {
        if (getcwd(cwd, sizeof cwd) == NULL) return 1;
        printf("%s\n", cwd);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "env") == 0) {
        const char *value = getenv(argv[2]);
        if (value == NULL) return 1;
        printf("%s\n", value);
        return 0;
    }
    if (argc >= 2) {
        fprintf(stderr, "usage: app [id | pwd | env NAME]\n");
        return 2;
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    for (;;) pause();
}
