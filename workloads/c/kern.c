/* Built as libkern.so (position-independent, instrumented) for calls.c. */
#include "kern.h"

__attribute__((noinline)) static double lib_inner(double x) { return x / 3.0; }

double lib_scale(double x) { return lib_inner(x) * 2.0; }
