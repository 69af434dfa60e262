// Parallax's C++ API (include/parallax.h): a function region and scoped
// regions that close on every way out of their scope.
#include <parallax.h>
#include <cstdio>

static double inner(int i) {
    PARALLAX_REGION("inner");
    if (i % 2)
        return i; // leaves "inner" here
    return i * 2.0;
}

static double outer() {
    PARALLAX_FUNCTION();
    double s = 0;
    for (int i = 0; i < 7; i++)
        s += inner(i);
    return s;
}

int main() {
    double s = 0;
    for (int k = 0; k < 3; k++)
        s += outer();
    std::printf("checksum=%.0f\n", s);
    return 0;
}
