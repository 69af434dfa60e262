// C++ for compiler instrumentation: names come out demangled.
//   classes [STEPS]
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace grid {

struct Mesh {
    std::vector<double> cells;
    explicit Mesh(int n) : cells(n, 1.0) {}
    __attribute__((noinline)) double relax(int sweeps);
};

__attribute__((noinline)) double Mesh::relax(int sweeps) {
    double s = 0;
    for (int k = 0; k < sweeps; k++)
        for (double &c : cells)
            s += c = c * 0.5 + 0.25;
    return s;
}

template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }

}  // namespace grid

int main(int argc, char **argv) {
    int steps = argc > 1 ? std::atoi(argv[1]) : 5;
    grid::Mesh m(64);
    double s = 0;
    for (int i = 0; i < steps; i++)
        s += m.relax(3) + grid::twice<int>(i);
    std::printf("%f\n", s);
    return 0;
}
