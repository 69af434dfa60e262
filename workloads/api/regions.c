/* Parallax's C API (include/parallax.h): a loop region, marks, a phase
 * marker and regions hidden by flow control. Prints a checksum that does
 * not depend on measurement. */
#include <parallax.h>
#include <stdio.h>

static double work(int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += i * 0.5;
    return s;
}

int main(void) {
    parallax_active();
    double t = 0;
    PARALLAX_PHASE("setup");
    for (int it = 0; it < 10; it++) {
        PARALLAX_REGION_BEGIN(step, "step", PARALLAX_LOOP);
        t += work(1000);
        PARALLAX_MARK("iteration", it);
        PARALLAX_REGION_END(step);
    }
    parallax_flow_off();
    for (int i = 0; i < 5; i++) {
        PARALLAX_REGION_BEGIN(hidden, "hidden", PARALLAX_USER);
        t += work(10);
        PARALLAX_REGION_END(hidden);
    }
    parallax_flow_on();
    printf("checksum=%.0f\n", t);
    return 3;
}
