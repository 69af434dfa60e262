/* A recursion DEPTH calls deep, for compiler instrumentation
 * (-finstrument-functions): each level does a little work and calls the
 * next, REPEAT times over.
 *
 *   recursion [DEPTH] [REPEAT]
 *
 * The stack must hold DEPTH frames: the recursion runs on a thread with a
 * stack of its own, sized for it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

__attribute__((noinline)) static double recurse(long depth) {
    double x = (double)depth * 0.5;
    if (depth > 1)
        x += recurse(depth - 1);
    sink = x;
    return x;
}

static long depth_arg = 100000;
static long repeat_arg = 1;

static void *run(void *unused) {
    (void)unused;
    for (long r = 0; r < repeat_arg; r++)
        sink = recurse(depth_arg);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1)
        depth_arg = atol(argv[1]);
    if (argc > 2)
        repeat_arg = atol(argv[2]);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* 256 bytes a frame with the instrumentation's calls is plenty. */
    size_t stack = (size_t)depth_arg * 256 + (1 << 20);
    pthread_attr_setstacksize(&attr, stack);
    pthread_t t;
    if (pthread_create(&t, &attr, run, NULL) != 0) {
        perror("pthread_create");
        return 1;
    }
    pthread_join(t, NULL);
    printf("recursion %ld deep, %ld times\n", depth_arg, repeat_arg);
    return 0;
}
