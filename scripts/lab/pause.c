/*
 * Minimal pod "pause" (infra) process for the podctl runtime lab.
 *
 * It holds the pod's namespaces open and does nothing else:
 *   - blocks in pause() forever,
 *   - exits 0 on SIGINT / SIGTERM (so StopPodSandbox is quick and clean),
 *   - reaps zombies on SIGCHLD (it is PID 1 of the pod when the PID namespace
 *     is shared across the pod's containers).
 *
 * Built by scripts/lab.sh with: gcc -static -Os -s -o pause pause.c
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_term(int sig) {
    (void)sig;
    _exit(0);
}

static void on_chld(int sig) {
    (void)sig;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    errno = saved;
}

int main(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
        printf("pause (podctl-lab) 3.9\n");
        return 0;
    }
    if (getpid() != 1) {
        /* Same warning as the upstream pause binary; harmless. */
        fprintf(stderr, "Warning: pause should be the first process\n");
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);

    sa.sa_handler = on_term;
    if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) {
        perror("sigaction");
        return 1;
    }

    sa.sa_handler = on_chld;
    sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
    if (sigaction(SIGCHLD, &sa, NULL) < 0) {
        perror("sigaction");
        return 2;
    }

    for (;;) {
        pause();
    }
    /* not reached */
    return 42;
}
