/* The calls that calibration times to learn what compiler instrumentation
 * costs a program (see parallax::calibrate::HookEntry): one small function
 * built as a program's code is. This file alone is built with
 * -finstrument-functions; the plain function opts out of it. The bodies
 * differ so that no two functions are merged into one. */

__attribute__((noinline, no_instrument_function)) unsigned pxl_cal_plain(unsigned x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

__attribute__((noinline)) unsigned pxl_cal_recorded(unsigned x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 2;
}

__attribute__((noinline)) unsigned pxl_cal_skipped(unsigned x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 3;
}
