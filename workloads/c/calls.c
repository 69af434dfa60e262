/* A call tree with known counts, for compiler instrumentation
 * (-finstrument-functions): main calls solve once; solve calls step STEPS
 * times; each step calls kernel WIDTH times and tiny WIDTH * 10 times.
 *
 *   calls [STEPS] [WIDTH] [exit-in-thread|segv|abort|fork|system]
 *
 * With a fourth word the program ends abnormally after its work (to show
 * that what was recorded survives), or starts a child process. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kern.h"

static volatile double sink;

__attribute__((noinline)) static double tiny(double x) { return x * 1.0000001 + 1e-9; }

__attribute__((noinline)) static double kernel(int i) {
    double s = 0;
    for (int k = 0; k < 200; k++)
        s += (double)(i + k) * 0.5;
    return s;
}

__attribute__((noinline)) static void step(int width) {
    double s = 0;
    for (int i = 0; i < width; i++) {
        s += kernel(i);
        for (int j = 0; j < 10; j++)
            s = tiny(s);
    }
    sink = s + lib_scale(s);
}

__attribute__((noinline)) static void solve(int steps, int width) {
    for (int i = 0; i < steps; i++)
        step(width);
}

static void *leave_now(void *arg) {
    (void)arg;
    exit(7);
}

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    int width = argc > 2 ? atoi(argv[2]) : 100;
    const char *how = argc > 3 ? argv[3] : "";
    solve(steps, width);
    printf("done %d %d\n", steps, width);
    fflush(stdout);
    if (!strcmp(how, "exit-in-thread")) {
        pthread_t t;
        pthread_create(&t, NULL, leave_now, NULL);
        pthread_join(t, NULL);
    } else if (!strcmp(how, "segv")) {
        volatile int *p = NULL;
        *p = 1;
    } else if (!strcmp(how, "abort")) {
        abort();
    } else if (!strcmp(how, "fork")) {
        pid_t pid = fork();
        if (pid == 0) {
            solve(2, width);
            exit(0);
        }
        waitpid(pid, NULL, 0);
    } else if (!strcmp(how, "system")) {
        /* A child started with fork and exec: this program again. */
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "%s 3 %d", argv[0], width);
        if (system(cmd) != 0)
            return 1;
    }
    return 0;
}
