/* A function of a shared library (libkern.so), or of the program itself
 * when built without it. */
double lib_scale(double x);
