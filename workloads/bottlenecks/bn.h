/* Helpers of the ground-truth programs: injected work and delays are
 * sleeps, so that their length survives a machine shared by more ranks
 * and threads than cores. */
#ifndef BN_H
#define BN_H
#include <time.h>

static void work_ms(double ms) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000.0);
    ts.tv_nsec = (long)((ms - 1000.0 * (double)ts.tv_sec) * 1e6);
    while (nanosleep(&ts, &ts) != 0) {
    }
}
#endif
